import type { Queryable } from './db.ts';

export interface DeviceSessionRecord {
  id: string;
  deviceCodeHash: string;
  userCode: string;
  clientId: string;
  expiresAt: string;
  createdAt: string;
}

type Row = { id: string; device_code_hash: string; user_code: string; client_id: string; expires_at: string; created_at: string };
const toRecord = (r: Row): DeviceSessionRecord => ({
  id: r.id,
  deviceCodeHash: r.device_code_hash,
  userCode: r.user_code,
  clientId: r.client_id,
  expiresAt: r.expires_at,
  createdAt: r.created_at,
});
const COLUMNS = 'id, device_code_hash, user_code, client_id, expires_at, created_at';

/** Lookup rows of device sessions (the lifecycle itself is the DeviceSession actor's snapshot). */
export function deviceSessionsRepo(db: Queryable) {
  return {
    async create(s: Omit<DeviceSessionRecord, 'createdAt'>): Promise<void> {
      await db.query(
        'insert into device_sessions (id, device_code_hash, user_code, client_id, expires_at) values ($1, $2, $3, $4, $5)',
        [s.id, s.deviceCodeHash, s.userCode, s.clientId, s.expiresAt],
      );
    },
    async byDeviceCodeHash(hash: string): Promise<DeviceSessionRecord | null> {
      const { rows } = await db.query<Row>(`select ${COLUMNS} from device_sessions where device_code_hash = $1`, [hash]);
      return rows[0] ? toRecord(rows[0]) : null;
    },
    async byUserCode(userCode: string): Promise<DeviceSessionRecord | null> {
      const { rows } = await db.query<Row>(`select ${COLUMNS} from device_sessions where user_code = $1`, [userCode]);
      return rows[0] ? toRecord(rows[0]) : null;
    },
    async remove(id: string): Promise<void> {
      await db.query('delete from device_sessions where id = $1', [id]);
    },
  };
}
