/** The Account Management API's answers, read as porta writes them (its representers' XML). */
import { describe, expect, it } from 'vitest';
import {
  AdminAnswerError,
  accountApplicationsOf,
  accountEventOf,
  accountOf,
  applicationOf,
  errorsOf,
  keysOf,
  plansOf,
} from '../../../../core/portal/admin-xml';

const APPLICATION = `<application><id>7</id><state>live</state><user_account_id>3</user_account_id><service_id>42</service_id>
<application_id>abc</application_id><keys><key>k1</key><key>k2</key></keys>
<plan custom="false" default="true"><id>9</id><name>Basic</name><type>application_plan</type><state>published</state></plan>
<name>Org application 1</name></application>`;

const ACCOUNT = `<?xml version="1.0" encoding="UTF-8"?><account><id>3</id><state>pending</state><org_name>Org &amp; Co</org_name>
<users><user><id>5</id><state>pending</state><role>admin</role><username>dev</username><email>dev@example.com</email></user></users>
<applications>${APPLICATION}</applications></account>`;

describe('admin XML', () => {
  it('reads an account with its admin user’s e-mail and its applications', () => {
    expect(accountOf(ACCOUNT)).toEqual({
      id: '3',
      state: 'pending',
      orgName: 'Org & Co',
      email: 'dev@example.com',
    });
    expect(accountApplicationsOf(ACCOUNT)).toEqual([
      {
        id: '7',
        state: 'live',
        name: 'Org application 1',
        serviceId: '42',
        planId: '9',
        planName: 'Basic',
        applicationId: 'abc',
        keys: ['k1', 'k2'],
      },
    ]);
  });

  it('reads a user_key application', () => {
    const app = applicationOf(
      '<application><id>8</id><state>live</state><service_id>42</service_id><user_key>uk</user_key><plan><id>9</id><name>B</name></plan><name>n</name></application>',
    );
    expect(app).toMatchObject({ id: '8', userKey: 'uk', keys: [] });
  });

  it('reads plans with their state, approval and default', () => {
    const plans = plansOf(
      '<plans><plan custom="false" default="true"><id>1</id><name>Basic</name><state>published</state><approval_required>false</approval_required></plan>' +
        '<plan default="false"><id>2</id><name>Secret</name><state>hidden</state><approval_required>true</approval_required></plan></plans>',
    );
    expect(plans).toEqual([
      { id: '1', name: 'Basic', published: true, approvalRequired: false, isDefault: true },
      { id: '2', name: 'Secret', published: false, approvalRequired: true, isDefault: false },
    ]);
  });

  it('reads key lists, plain or with values', () => {
    expect(keysOf('<keys><key>a</key><key>b</key></keys>')).toEqual(['a', 'b']);
    expect(keysOf('<keys><key><value>a</value></key></keys>')).toEqual(['a']);
    expect(keysOf('<keys/>')).toEqual([]);
  });

  it('reads an account event, and tells another event apart', () => {
    const event = accountEventOf(
      `<event><type>account</type><action>updated</action><object>${ACCOUNT}</object></event>`.replace(
        '<?xml version="1.0" encoding="UTF-8"?>',
        '',
      ),
    );
    expect(event).toMatchObject({
      type: 'account',
      action: 'updated',
      account: { id: '3', state: 'pending' },
    });
    expect(
      accountEventOf(
        `<event><type>application</type><action>created</action><object>${APPLICATION}</object></event>`,
      ),
    ).toEqual({
      type: 'application',
      action: 'created',
    });
  });

  it('reads the errors of a refusal, XML or JSON', () => {
    expect(errorsOf('<errors><error>Plan is already bought</error><error>x</error></errors>')).toEqual([
      'Plan is already bought',
      'x',
    ]);
    expect(errorsOf('<error>Access denied</error>')).toEqual(['Access denied']);
    expect(errorsOf('{"error":"Your access token does not have the correct permissions"}')).toEqual([
      'Your access token does not have the correct permissions',
    ]);
    expect(errorsOf('')).toEqual([]);
  });

  it('refuses a document with a DTD, and one that is not the expected element', () => {
    expect(() =>
      accountOf('<!DOCTYPE a [<!ENTITY x "y">]><account><id>1</id><state>approved</state></account>'),
    ).toThrow(AdminAnswerError);
    expect(() => accountOf('<application><id>1</id></application>')).toThrow('not an <account>');
  });
});
