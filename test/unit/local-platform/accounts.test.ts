/** porta's account state machine (app/models/account/states.rb): every event from every state. */
import { describe, expect, it } from 'vitest';
import type { AccountState } from '../../../core/portal/admin-xml';
import { ACCOUNT_STATES, AccountBook, type AccountEvent, transition } from '../../../local/platform/accounts';

const MOVES: Record<AccountEvent, Partial<Record<AccountState, AccountState>>> = {
  approve: { created: 'approved', pending: 'approved', rejected: 'approved' },
  reject: { created: 'rejected', pending: 'rejected', approved: 'rejected' },
  make_pending: { created: 'pending', approved: 'pending', rejected: 'pending' },
};

function account(state: AccountState) {
  let id = 0;
  const created = new AccountBook(() => String(++id)).create(
    { orgName: 'O', username: 'u', email: 'u@example.com', approvalRequired: true },
    1000,
  );
  created.state = state;
  return created;
}

describe('account state machine', () => {
  for (const event of Object.keys(MOVES) as AccountEvent[]) {
    it.each(ACCOUNT_STATES)(`${event} from %s`, (from) => {
      const subject = account(from);
      const outcome = transition(subject, event, 2000);
      const to = MOVES[event][from];
      if (to === undefined) {
        expect(outcome).toEqual({ ok: false, message: `cannot transition via "${event}"` });
        expect(subject).toMatchObject({ state: from, updatedAt: 1000 });
      } else {
        expect(outcome).toEqual({ ok: true });
        expect(subject).toMatchObject({ state: to, updatedAt: 2000 });
      }
    });
  }

  it('finds by username, user id or e-mail (case-insensitive), and lists by state', () => {
    let id = 0;
    const book = new AccountBook(() => String(++id));
    const first = book.create(
      { orgName: 'A', username: 'ann', email: 'Ann@Example.com', approvalRequired: false },
      1,
    );
    const second = book.create(
      { orgName: 'B', username: 'ben', email: 'ben@example.com', approvalRequired: true },
      1,
    );
    expect(book.find({ username: 'ann' })).toBe(first);
    expect(book.find({ email: 'ann@example.com' })).toBe(first);
    expect(book.find({ userId: second.users[0]?.id as string })).toBe(second);
    expect(book.find({ username: 'nobody' })).toBeUndefined();
    expect(book.list('created')).toEqual([second]);
    expect(book.list(undefined)).toEqual([first, second]);
    expect(book.taken('ann', 'BEN@example.com')).toEqual(['username', 'email']);
    expect(book.taken('carl', 'carl@example.com')).toEqual([]);
  });
});
