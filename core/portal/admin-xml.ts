/**
 * The Account Management API's XML answers, read into what the portal needs: an account (porta's
 * AccountRepresenter: id, state, org_name, users), an application (id, state, plan, user_key or
 * application_id and keys), a plan (PlanRepresenter: id, name, state, approval_required, `default`), and
 * the error list. Checked first by the project's linear XML reader (no DTD, bounded depth).
 */
import { XMLParser } from 'fast-xml-parser';
import { readXml, type XmlBounds } from '../xml/xml-tree';

const BOUNDS: XmlBounds = { maxDepth: 16, maxAttributes: 16, maxNamespaces: 8 };
const LISTS = new Set(['account', 'application', 'plan', 'key', 'user', 'error', 'event']);

const parser = new XMLParser({
  ignoreDeclaration: true,
  parseTagValue: false,
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  isArray: (name) => LISTS.has(name),
});

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null;

export class AdminAnswerError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'AdminAnswerError';
  }
}

function textOf(value: unknown): string | undefined {
  if (Array.isArray(value)) return textOf(value[0]);
  if (typeof value === 'string' || typeof value === 'number') return String(value).trim() || undefined;
  if (isNode(value) && (typeof value['#text'] === 'string' || typeof value['#text'] === 'number')) {
    return String(value['#text']).trim() || undefined;
  }
  return undefined;
}

function nodes(value: unknown): Node[] {
  return (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter(isNode);
}

function documentOf(xml: string): Node {
  const reading = readXml(xml, BOUNDS);
  if (!reading.ok) throw new AdminAnswerError(`the platform's answer is not XML: ${reading.detail}`);
  return parser.parse(xml) as Node;
}

export type AccountState =
  | 'created'
  | 'pending'
  | 'approved'
  | 'rejected'
  | 'suspended'
  | 'scheduled_for_deletion';

export interface Account {
  readonly id: string;
  readonly state: AccountState;
  readonly orgName: string;
  readonly email?: string;
}

export interface Application {
  readonly id: string;
  /** `live`, `pending` (the plan needs approval) or `suspended`. */
  readonly state: string;
  readonly name: string;
  readonly serviceId: string;
  readonly planId: string;
  readonly planName: string;
  readonly userKey?: string;
  readonly applicationId?: string;
  readonly keys: readonly string[];
}

export interface Plan {
  readonly id: string;
  readonly name: string;
  readonly published: boolean;
  readonly approvalRequired: boolean;
  readonly isDefault: boolean;
}

function accountFrom(node: Node): Account {
  const id = textOf(node.id);
  const state = textOf(node.state);
  if (id === undefined || state === undefined) throw new AdminAnswerError('the account has no id or state');
  const [user] = nodes(isNode(node.users) ? node.users.user : undefined);
  const email = user ? textOf(user.email) : undefined;
  return {
    id,
    state: state as AccountState,
    orgName: textOf(node.org_name) ?? '',
    ...(email !== undefined && { email }),
  };
}

function keysFrom(value: unknown): string[] {
  const list = isNode(value) ? value.key : undefined;
  return (Array.isArray(list) ? list : [])
    .map((key) => (isNode(key) && key.value !== undefined ? textOf(key.value) : textOf(key)))
    .filter((key): key is string => key !== undefined);
}

function applicationFrom(node: Node): Application {
  const id = textOf(node.id);
  if (id === undefined) throw new AdminAnswerError('the application has no id');
  const plan = nodes(node.plan)[0] ?? {};
  const userKey = textOf(node.user_key);
  const applicationId = textOf(node.application_id);
  return {
    id,
    state: textOf(node.state) ?? 'live',
    name: textOf(node.name) ?? '',
    serviceId: textOf(node.service_id) ?? '',
    planId: textOf(plan.id) ?? '',
    planName: textOf(plan.name) ?? '',
    ...(userKey !== undefined && { userKey }),
    ...(applicationId !== undefined && { applicationId }),
    keys: keysFrom(node.keys),
  };
}

function planFrom(node: Node): Plan {
  const id = textOf(node.id);
  if (id === undefined) throw new AdminAnswerError('the plan has no id');
  return {
    id,
    name: textOf(node.name) ?? id,
    published: (textOf(node.state) ?? 'published') === 'published',
    approvalRequired: textOf(node.approval_required) === 'true',
    isDefault: textOf(node['@default']) === 'true',
  };
}

/** `<account>` (sign-up, find, read). */
export function accountOf(xml: string): Account {
  const [account] = nodes(documentOf(xml).account);
  if (account === undefined) throw new AdminAnswerError('the answer is not an <account>');
  return accountFrom(account);
}

/** The applications an `<account>` lists (sign-up's `with_apps` answer). */
export function accountApplicationsOf(xml: string): Application[] {
  const [account] = nodes(documentOf(xml).account);
  const list = account && isNode(account.applications) ? account.applications.application : undefined;
  return nodes(list).map(applicationFrom);
}

/** `<application>` (create, read, update). */
export function applicationOf(xml: string): Application {
  const [application] = nodes(documentOf(xml).application);
  if (application === undefined) throw new AdminAnswerError('the answer is not an <application>');
  return applicationFrom(application);
}

/** `<applications>` (list). */
export function applicationsOf(xml: string): Application[] {
  const list = documentOf(xml).applications;
  return nodes(isNode(list) ? list.application : undefined).map(applicationFrom);
}

/** `<plans>` (a service's application plans). */
export function plansOf(xml: string): Plan[] {
  const list = documentOf(xml).plans;
  return nodes(isNode(list) ? list.plan : undefined).map(planFrom);
}

/** `<keys>` (an application's keys). */
export function keysOf(xml: string): string[] {
  return keysFrom(documentOf(xml).keys);
}

/** The messages of an `<errors>` or `<error>` answer, if it is one. */
export function errorsOf(body: string): string[] {
  try {
    if (body.trimStart().startsWith('{')) {
      const json = JSON.parse(body) as { error?: unknown; errors?: unknown };
      if (typeof json.error === 'string') return [json.error];
      if (isNode(json.errors)) return Object.entries(json.errors).map(([k, v]) => `${k} ${String(v)}`);
      return [];
    }
    const document = documentOf(body);
    const list = isNode(document.errors) ? document.errors.error : document.error;
    return (Array.isArray(list) ? list : list === undefined ? [] : [list])
      .map(textOf)
      .filter((error): error is string => error !== undefined);
  } catch {
    return [];
  }
}

/** A webhook `<event>` about an account: its action and the account as it is now. */
export interface AccountEvent {
  readonly type: string;
  readonly action: string;
  readonly account?: Account;
}

export function accountEventOf(xml: string): AccountEvent {
  const event = nodes(documentOf(xml).event)[0];
  if (event === undefined) throw new AdminAnswerError('the document is not an <event>');
  const type = textOf(event.type) ?? '';
  const action = textOf(event.action) ?? '';
  const [account] = nodes(isNode(event.object) ? event.object.account : undefined);
  return {
    type,
    action,
    ...(type === 'account' && account !== undefined && { account: accountFrom(account) }),
  };
}
