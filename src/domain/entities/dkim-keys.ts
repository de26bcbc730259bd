import type { DkimKeyStatus } from '../catalog.js';

/** A key as published: never the private key (see sealedSigningKey for the one reader of it). */
export interface DkimKeyRow {
  id: string;
  domainId: string;
  selector: string;
  algorithm: 'rsa';
  publicKey: string;
  status: DkimKeyStatus;
  createdAt: Date;
  activatedAt: Date | null;
}
