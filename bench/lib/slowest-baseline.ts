import type { BaselineFigures } from '../parts/baselines.js';

/**
 * The slowest baseline the service's delivery is judged against: route + INSERT, raw nodemailer, and
 * the DKIM-signed nodemailer when the baselines measured it (the service signs every message, so that
 * one is the fair comparison and in practice the slowest).
 */
export function slowest(x: BaselineFigures): { name: string; rate: number } {
  const candidates = [
    { name: 'route + INSERT', rate: x.insertRate },
    { name: 'raw nodemailer', rate: x.nodemailerRate },
    ...(x.signedNodemailerRate !== undefined ? [{ name: 'DKIM-signed nodemailer', rate: x.signedNodemailerRate }] : []),
  ];
  return candidates.reduce((a, b) => (b.rate < a.rate ? b : a));
}
