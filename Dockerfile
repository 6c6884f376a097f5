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
# Two malloc arenas, as bin/platform sets them: threads that finished give their memory back (issue 14 §6).
ENV HOST=0.0.0.0 PORT=8080 PLATFORM_DATA_DIR=/data MALLOC_ARENA_MAX=2
EXPOSE 8080
CMD ["node", "--import", "tsx", "bin/main.ts", "serve"]
