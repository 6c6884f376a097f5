# One platform node. Runs TypeScript through tsx, as `npm start` does.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY actors ./actors
COPY runtime ./runtime
COPY edge ./edge
COPY store ./store
COPY bin ./bin
ENV HOST=0.0.0.0 PORT=8080 PLATFORM_DATA_DIR=/data
EXPOSE 8080
CMD ["node", "--import", "tsx", "bin/main.ts", "serve"]
