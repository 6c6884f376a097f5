/**
 * jose (JWT signing and verification), loaded with the first token a node signs or checks rather than when it
 * starts: the package is some fifty modules, and a node's start needs none of them. Every caller is asynchronous
 * already, so the first one waits for the load and later ones find it done.
 */
let jose: Promise<typeof import('jose')> | undefined;

export function loadJose(): Promise<typeof import('jose')> {
  return (jose ??= import('jose').catch((err: unknown) => {
    // A failed load (a broken installation) is tried again by the next caller, not remembered.
    jose = undefined;
    throw err;
  }));
}
