/** Reading the admin API's `applications/find.xml` answer: the application's own name, within bounds. */
import { describe, expect, it } from 'vitest';
import { parseApplicationXml } from '../../../../core/platform/application-directory';

/** The shape porta's Cinstance#to_xml writes: the plan, with its own name, comes before the application's. */
const ANSWER = `<?xml version="1.0" encoding="UTF-8"?>
<application>
  <id>1409618</id>
  <created_at>2030-01-01T10:00:00Z</created_at>
  <state>live</state>
  <user_account_id>2445581</user_account_id>
  <first_traffic_at/>
  <service_id>2555417735060</service_id>
  <user_key>f3c8d1e9b27a4c6e8d0f1a2b3c4d9e7f</user_key>
  <provider_verification_key>0a1b2c</provider_verification_key>
  <plan custom="false" default="true">
    <id>2357356</id>
    <name>Basic</name>
    <type>application_plan</type>
  </plan>
  <name>Acme &amp; Co mobile</name>
  <description>iOS app</description>
</application>`;

describe('parseApplicationXml', () => {
  it("takes the application's id, account and own name, not its plan's", () => {
    expect(parseApplicationXml(ANSWER)).toEqual({
      id: '1409618',
      name: 'Acme & Co mobile',
      account: '2445581',
    });
  });

  it('names an application without a name by its id', () => {
    expect(parseApplicationXml('<application><id>7</id><name></name></application>')).toEqual({
      id: '7',
      name: '7',
    });
  });

  it('cuts a very long name so the alert stays readable', () => {
    const parsed = parseApplicationXml(
      `<application><id>7</id><name>${'n'.repeat(5000)}</name></application>`,
    );
    expect(parsed?.name).toHaveLength(200);
  });

  it.each([
    ['an error answer', '<errors><error>Not found</error></errors>'],
    ['an application without id', '<application><name>x</name></application>'],
    ['a document that is not XML', 'Not Found'],
    ['a DTD', '<!DOCTYPE application [<!ENTITY x "y">]><application><id>&x;</id></application>'],
    [
      'nesting over the bound',
      `<application><id>7</id>${'<a>'.repeat(50)}${'</a>'.repeat(50)}</application>`,
    ],
  ])('reads no application from %s', (_, xml) => {
    expect(parseApplicationXml(xml)).toBeUndefined();
  });
});
