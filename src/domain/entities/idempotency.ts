export type Reservation =
  | { state: 'reserved' }
  | { state: 'replay'; operation: string; requestHash: Buffer; response: unknown }
  | { state: 'in_progress'; operation: string; requestHash: Buffer };
