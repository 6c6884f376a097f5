/**
 * The AI SDK's core (`ai`: generateText, streamText, tools), loaded on the first model turn rather than when a node
 * starts. It and what it pulls in (its gateway provider, OpenTelemetry's API) are some sixty modules and most of a
 * megabyte of JavaScript that a node parsed at every start, though many nodes run no model for minutes, or ever.
 * A turn is asynchronous already, so the first one waits for the load and later ones find it done.
 */
let sdk: Promise<typeof import('ai')> | undefined;

export function loadAiSdk(): Promise<typeof import('ai')> {
  return (sdk ??= import('ai').catch((err: unknown) => {
    // A failed load (a broken installation) is tried again by the next turn, not remembered.
    sdk = undefined;
    throw err;
  }));
}
