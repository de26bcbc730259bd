import crypto from 'node:crypto';

const MAC_BYTES = 16;

/** Seals payloads into URL-safe tokens and opens only the ones it sealed, each for one purpose. */
export interface TokenSealer {
  seal(purpose: string, payload: string): string;
  /** The payload of a token sealed with this key for `purpose`, else undefined. */
  unseal(purpose: string, token: string): string | undefined;
}

/**
 * A token is base64url(payload ‖ mac), the mac being HMAC-SHA256 over `purpose:` and the payload, truncated
 * to 16 bytes: the payload needs no table, and changing one byte of it breaks the mac. A token whose
 * payload would exceed `maxPayloadBytes` is refused on its length, before decoding or the mac.
 */
export function createTokenSealer(key: Buffer | string, maxPayloadBytes: number): TokenSealer {
  const maxTokenChars = Math.ceil((maxPayloadBytes + MAC_BYTES) / 3) * 4;
  // The purpose prefix keeps a token sealed for one purpose from ever opening for another.
  const mac = (purpose: string, payload: Buffer) =>
    crypto.createHmac('sha256', key).update(`${purpose}:`).update(payload).digest().subarray(0, MAC_BYTES);

  return {
    seal(purpose, payload) {
      const bytes = Buffer.from(payload, 'utf8');
      return Buffer.concat([bytes, mac(purpose, bytes)]).toString('base64url');
    },
    unseal(purpose, token) {
      if (token.length > maxTokenChars) return undefined;
      const bytes = Buffer.from(token, 'base64url');
      // The decoder skips characters it does not know and ignores spare bits: only the one canonical spelling counts.
      if (bytes.length <= MAC_BYTES || bytes.toString('base64url') !== token) return undefined;
      const payload = bytes.subarray(0, bytes.length - MAC_BYTES);
      if (!crypto.timingSafeEqual(bytes.subarray(bytes.length - MAC_BYTES), mac(purpose, payload))) return undefined;
      return payload.toString('utf8');
    },
  };
}
