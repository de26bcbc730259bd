import { randomFillSync } from 'node:crypto';

/**
 * Random bytes from the OS's CSPRNG, drawn 4 KiB at a time and each handed out once. Asking the OS for a few
 * bytes at a time costs a call each (ulid asks once per character, nodemailer once per MIME part); pooled,
 * the same randomness costs a copy.
 */
const pool = Buffer.alloc(4096);
let at = pool.length;

function take(n: number): number {
  if (at + n > pool.length) {
    randomFillSync(pool);
    at = 0;
  }
  const start = at;
  at += n;
  return start;
}

/** A random number in [0, 1) in steps of 1/256: one byte, what ulid's random source is asked for. */
export function randomFraction(): number {
  return pool[take(1)]! / 256;
}

/** `bytes` random bytes as hex (at most the pool's size, 4,096). */
export function randomHex(bytes: number): string {
  // More than the pool holds would read past its end and answer fewer bytes than asked.
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > pool.length)
    throw new RangeError(`randomHex takes 1 to ${pool.length} bytes, not ${bytes}`);
  const start = take(bytes);
  return pool.toString('hex', start, start + bytes);
}
