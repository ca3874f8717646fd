/**
 * A provider's developer accounts and their admin users, with porta's account state machine
 * (`app/models/account/states.rb`): an account starts `created`; `approve`, `reject` and `make_pending`
 * move it as the table below says, and any other move is refused (porta answers 422 "State cannot
 * transition via ..."). No password is kept: the platform needs none (the portal signs developers in).
 */

import type { AccountState } from '../../core/portal/admin-xml';

export const ACCOUNT_STATES: readonly AccountState[] = [
  'created',
  'pending',
  'approved',
  'rejected',
  'suspended',
  'scheduled_for_deletion',
];
export type AccountEvent = 'approve' | 'reject' | 'make_pending';

/** porta's `event` blocks: for each event, the states it leaves from and where it goes. */
const TRANSITIONS: Readonly<Record<AccountEvent, Partial<Record<AccountState, AccountState>>>> = {
  make_pending: { created: 'pending', approved: 'pending', rejected: 'pending' },
  approve: { created: 'approved', pending: 'approved', rejected: 'approved' },
  reject: { created: 'rejected', pending: 'rejected', approved: 'rejected' },
};

/** porta's user states; the API sign-up activates the user at once only when no approval is required. */
export type UserState = 'pending' | 'active';

export interface DeveloperUser {
  readonly id: string;
  readonly username: string;
  readonly email: string;
  state: UserState;
  readonly role: 'admin';
  readonly createdAt: number;
  updatedAt: number;
}

export interface DeveloperAccount {
  readonly id: string;
  readonly orgName: string;
  state: AccountState;
  readonly createdAt: number;
  updatedAt: number;
  readonly users: DeveloperUser[];
}

export type TransitionOutcome = { readonly ok: true } | { readonly ok: false; readonly message: string };

/** Applies one event; one with no move from the account's state is refused (the `state` error) and changes nothing. */
export function transition(account: DeveloperAccount, event: AccountEvent, now: number): TransitionOutcome {
  const next = TRANSITIONS[event][account.state];
  if (next === undefined) return { ok: false, message: `cannot transition via "${event}"` };
  account.state = next;
  account.updatedAt = now;
  return { ok: true };
}

export interface NewAccount {
  readonly orgName: string;
  readonly username: string;
  readonly email: string;
  /** Without approval the account is approved and its user active at once (porta's minimal sign-up). */
  readonly approvalRequired: boolean;
}

/** What identifies an account in `accounts/find.xml`: username wins, then user id, then e-mail. */
export type AccountQuery =
  | { readonly username: string }
  | { readonly userId: string }
  | { readonly email: string };

export class AccountBook {
  private readonly accounts = new Map<string, DeveloperAccount>();

  constructor(private readonly nextId: () => string) {}

  /** The fields of a sign-up another user already holds (an e-mail in any case); none when it may go ahead. */
  taken(username: string, email: string): ('username' | 'email')[] {
    const users = [...this.accounts.values()].flatMap((account) => account.users);
    const fields: ('username' | 'email')[] = [];
    if (users.some((user) => user.username === username)) fields.push('username');
    if (users.some((user) => user.email.toLowerCase() === email.toLowerCase())) fields.push('email');
    return fields;
  }

  create(input: NewAccount, now: number): DeveloperAccount {
    const user: DeveloperUser = {
      id: this.nextId(),
      username: input.username,
      email: input.email,
      state: input.approvalRequired ? 'pending' : 'active',
      role: 'admin',
      createdAt: now,
      updatedAt: now,
    };
    const account: DeveloperAccount = {
      id: this.nextId(),
      orgName: input.orgName,
      state: input.approvalRequired ? 'created' : 'approved',
      createdAt: now,
      updatedAt: now,
      users: [user],
    };
    this.accounts.set(account.id, account);
    return account;
  }

  get(id: string): DeveloperAccount | undefined {
    return this.accounts.get(id);
  }

  delete(id: string): boolean {
    return this.accounts.delete(id);
  }

  find(query: AccountQuery): DeveloperAccount | undefined {
    const matches = (user: DeveloperUser) =>
      'username' in query
        ? user.username === query.username
        : 'userId' in query
          ? user.id === query.userId
          : user.email.toLowerCase() === query.email.toLowerCase();
    return [...this.accounts.values()].find((account) => account.users.some(matches));
  }

  /** In id order (porta orders by id), optionally only those in one state. */
  list(state: AccountState | undefined): DeveloperAccount[] {
    const all = [...this.accounts.values()];
    return state === undefined ? all : all.filter((account) => account.state === state);
  }
}
