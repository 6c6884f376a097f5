import { describe, expect, it } from 'vitest';
import { deviceSessionMachine, deviceSessionTimers, type DeviceSessionEvent } from '../../actors/index.ts';
import { walk as walkMachine } from '../helpers/statechart.ts';

const input = { id: 's1', clientId: 'cli', userCode: 'ABCD-EFGH', expiresAt: 1_000 };
const grant = { userId: 'u1', accountId: 'a1', scope: 'platform' };

const walk = (...events: DeviceSessionEvent[]) => walkMachine(deviceSessionMachine, input, ...events);

describe('DeviceSession statechart', () => {
  it('[DEVICE-03] starts pending and stays pending on a poll, with a live expiry timer', () => {
    const s = walk({ type: 'REDEEM', clientId: 'cli' });
    expect(s.value).toBe('pending');
    expect(s.emitted).toEqual([{ type: 'reply.redeem', outcome: 'pending' }]);
    expect(deviceSessionTimers(s)).toEqual([{ key: 'expire', at: 1_000, event: { type: 'EXPIRE' } }]);
  });

  it('[DEVICE-10] [DEVICE-22] approve then redeem issues once and ends the session', () => {
    const s = walk({ type: 'APPROVE', ...grant }, { type: 'REDEEM', clientId: 'cli' });
    expect(s.value).toBe('consumed');
    expect(s.status).toBe('done');
    expect(s.emitted).toEqual([{ type: 'reply.redeem', outcome: 'issued' }]);
    expect(s.context.grant).toEqual(grant);
    expect(deviceSessionTimers(s)).toEqual([]);
  });

  it('[DEVICE-25] deny then redeem reports the denial once and ends the session', () => {
    const s = walk({ type: 'DENY', userId: 'u1' }, { type: 'REDEEM', clientId: 'cli' });
    expect(s.value).toBe('denialReported');
    expect(s.status).toBe('done');
    expect(s.emitted).toEqual([{ type: 'reply.redeem', outcome: 'denied' }]);
  });

  it('[DEVICE-09] a redeem by another client is invalid and changes no state', () => {
    for (const first of [[], [{ type: 'APPROVE', ...grant }], [{ type: 'DENY', userId: 'u1' }]] as DeviceSessionEvent[][]) {
      const s = walk(...first, { type: 'REDEEM', clientId: 'other' });
      expect(s.status).toBe('active');
      expect(s.emitted).toEqual([{ type: 'reply.redeem', outcome: 'invalid' }]);
    }
  });

  it('[DEVICE-23] expiry ends a pending, approved or denied session', () => {
    for (const first of [[], [{ type: 'APPROVE', ...grant }], [{ type: 'DENY', userId: 'u1' }]] as DeviceSessionEvent[][]) {
      const s = walk(...first, { type: 'EXPIRE' });
      expect(s.value).toBe('expired');
      expect(s.status).toBe('done');
    }
  });

  it('a decision is taken once: approve after deny and deny after approve change nothing', () => {
    expect(walk({ type: 'DENY', userId: 'u1' }, { type: 'APPROVE', ...grant }).value).toBe('denied');
    expect(walk({ type: 'APPROVE', ...grant }, { type: 'DENY', userId: 'u1' }).value).toBe('approved');
  });
});
