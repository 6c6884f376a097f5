import { isPlatformError, type PlatformError } from '../../runtime/index.ts';

/** The PlatformError `p` rejects with; anything else (or no rejection) fails the test. */
export async function rejection(p: Promise<unknown>): Promise<PlatformError> {
  try {
    await p;
  } catch (err) {
    if (isPlatformError(err)) return err;
    throw err;
  }
  throw new Error('expected a PlatformError, but the promise resolved');
}
