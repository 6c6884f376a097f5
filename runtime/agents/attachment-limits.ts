/** 20 MiB per file (spec §8), exactly: 20971520 bytes pass, one more does not. */
export const MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024;
/** Images are at most this many pixels wide and this many tall (spec §8). */
export const MAX_IMAGE_SIDE = 4096;
