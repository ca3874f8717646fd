import { describe, expect, it } from 'vitest';
import {
  type AccessHeaderReading,
  MAX_ACCESS_TOKEN_BYTES,
  readAccessHeader,
  SOAP_CREDENTIAL_SCHEMES,
  type SoapCredentialMode,
} from '../../../../core/soap/access-header';
import { readSoapMessage, type SoapMessage } from '../../../../core/soap/envelope';
import { envelope, KEY, NS, request, soapSettings } from './fixtures';

const METHOD = '<t:method>GetQuote</t:method>';

function messageOf(header: string | null, body?: string): SoapMessage {
  const reading = readSoapMessage(
    request(envelope({ header, ...(body !== undefined && { body }) })),
    soapSettings(),
  );
  if (!reading.ok) throw new Error(`envelope refused: ${reading.detail}`);
  return reading.message;
}

function read(
  header: string | null,
  mode: SoapCredentialMode = 'user_key',
  body?: string,
): AccessHeaderReading {
  return readAccessHeader(messageOf(header, body), SOAP_CREDENTIAL_SCHEMES[mode], NS);
}

describe('the credential in the SOAP header', () => {
  it('reads the key of user_key mode from ApiKey, and the operation from method', () => {
    expect(read(`<t:ApiKey>${KEY}</t:ApiKey>${METHOD}`)).toEqual({
      ok: true,
      header: { credential: { kind: 'user_key', userKey: KEY }, method: 'GetQuote' },
    });
  });

  it('trims the whitespace around values, as HTTP does around header values', () => {
    expect(read(`<t:ApiKey>\n   ${KEY}\n </t:ApiKey><t:method> GetQuote </t:method>`)).toMatchObject({
      ok: true,
      header: { credential: { userKey: KEY }, method: 'GetQuote' },
    });
  });

  it('reads app_id mode from AppId and AppKey; the key is optional, the id is not', () => {
    expect(read(`<t:AppId>app-1</t:AppId><t:AppKey>secret-1</t:AppKey>${METHOD}`, 'app_id')).toMatchObject({
      ok: true,
      header: { credential: { kind: 'app_id', appId: 'app-1', appKey: 'secret-1' } },
    });
    expect(read(`<t:AppId>app-1</t:AppId>${METHOD}`, 'app_id')).toEqual({
      ok: true,
      header: { credential: { kind: 'app_id', appId: 'app-1' }, method: 'GetQuote' },
    });
    expect(read(`<t:AppKey>secret-1</t:AppKey>${METHOD}`, 'app_id')).toMatchObject({
      ok: false,
      cause: 'missing_credential',
    });
  });

  it('reads oauth mode from AccessToken, which may be as long as a signed token', () => {
    const token = `eyJhbGciOiJFUzI1NiJ9.${'a'.repeat(900)}.sig`;
    expect(read(`<t:AccessToken>${token}</t:AccessToken>${METHOD}`, 'oauth')).toMatchObject({
      ok: true,
      header: { credential: { kind: 'access_token', accessToken: token } },
    });
    const tooLong = 'a'.repeat(MAX_ACCESS_TOKEN_BYTES + 1);
    expect(read(`<t:AccessToken>${tooLong}</t:AccessToken>${METHOD}`, 'oauth')).toMatchObject({
      ok: false,
      cause: 'invalid_credential',
      detail: 'AccessToken is too long',
    });
  });

  it('names a missing credential, including one in another namespace or with another scheme', () => {
    for (const header of [
      METHOD,
      `<o:ApiKey xmlns:o="urn:example:other">${KEY}</o:ApiKey>${METHOD}`,
      `<ApiKey>${KEY}</ApiKey>${METHOD}`,
      `<t:AppId>app-1</t:AppId>${METHOD}`,
      `<t:apikey>${KEY}</t:apikey>${METHOD}`,
    ]) {
      const reading = read(header);
      expect(reading).toMatchObject({ ok: false, cause: 'missing_credential' });
      expect(!reading.ok && reading.detail).toContain(
        `no ApiKey element in the SOAP header (namespace ${NS})`,
      );
    }
    expect(read(null)).toMatchObject({ ok: false, cause: 'missing_credential' });
  });

  it('refuses several credential elements, whatever prefixes they use', () => {
    const twice = `<t:ApiKey>${KEY}</t:ApiKey><x:ApiKey xmlns:x="${NS}">other</x:ApiKey>${METHOD}`;
    expect(read(twice)).toEqual({
      ok: false,
      cause: 'invalid_credential',
      detail: 'the header holds 2 ApiKey elements',
    });
    const sameValue = `<t:ApiKey>${KEY}</t:ApiKey><t:ApiKey>${KEY}</t:ApiKey>${METHOD}`;
    expect(read(sameValue)).toMatchObject({ ok: false, cause: 'invalid_credential' });
    const twoKeys = `<t:AppId>a</t:AppId><t:AppKey>k1</t:AppKey><t:AppKey>k2</t:AppKey>${METHOD}`;
    expect(read(twoKeys, 'app_id')).toMatchObject({ ok: false, cause: 'invalid_credential' });
  });

  it('checks values as header credentials are checked: empty, too long, not printable ASCII, element content', () => {
    const cases: readonly [string, string][] = [
      ['<t:ApiKey></t:ApiKey>', 'ApiKey is empty'],
      ['<t:ApiKey/>', 'ApiKey is empty'],
      [`<t:ApiKey>${'k'.repeat(257)}</t:ApiKey>`, 'ApiKey is too long'],
      ['<t:ApiKey>two words</t:ApiKey>', 'ApiKey may hold printable ASCII characters only'],
      ['<t:ApiKey>clé</t:ApiKey>', 'ApiKey may hold printable ASCII characters only'],
      ['<t:ApiKey>a&#9;b</t:ApiKey>', 'ApiKey may hold printable ASCII characters only'],
      ['<t:ApiKey>a,b</t:ApiKey>', 'ApiKey holds several values'],
      ['<t:ApiKey><x>k</x></t:ApiKey>', 'ApiKey must hold text only'],
    ];
    for (const [header, detail] of cases) {
      expect(read(`${header}${METHOD}`)).toEqual({ ok: false, cause: 'invalid_credential', detail });
    }
    expect(read(`<t:ApiKey>${'k'.repeat(256)}</t:ApiKey>${METHOD}`).ok).toBe(true);
  });

  it('reads a value written with entity and character references, or in a CDATA section', () => {
    expect(read(`<t:ApiKey>a&amp;b&#34;&#x3c;</t:ApiKey>${METHOD}`)).toMatchObject({
      header: { credential: { userKey: 'a&b"<' } },
    });
    expect(read(`<t:ApiKey><![CDATA[${KEY}]]></t:ApiKey>${METHOD}`)).toMatchObject({
      header: { credential: { userKey: KEY } },
    });
  });
});

describe('the method in the SOAP header', () => {
  const key = `<t:ApiKey>${KEY}</t:ApiKey>`;

  it('is required and must not be empty', () => {
    for (const header of [
      key,
      `${key}<t:method></t:method>`,
      `${key}<o:method xmlns:o="urn:o">GetQuote</o:method>`,
    ]) {
      expect(read(header)).toMatchObject({ ok: false, cause: 'method_missing' });
    }
  });

  it('is refused when given twice', () => {
    expect(read(`${key}${METHOD}${METHOD}`)).toEqual({
      ok: false,
      cause: 'method_invalid',
      detail: 'the header holds 2 method elements',
    });
  });

  it('must name the one operation element of the Body, by local name, whatever its namespace', () => {
    expect(read(`${key}<t:method>GetPrice</t:method>`)).toEqual({
      ok: false,
      cause: 'method_invalid',
      detail: 'method "GetPrice" does not name the operation in the Body (GetQuote)',
    });
    expect(read(`${key}${METHOD}`, 'user_key', '<GetQuote/><GetQuote/>')).toMatchObject({
      cause: 'method_invalid',
      detail: 'the Body must hold exactly one operation element',
    });
    expect(read(`${key}${METHOD}`, 'user_key', '')).toMatchObject({ cause: 'method_invalid' });
    expect(read(`${key}${METHOD}`, 'user_key', '<GetQuote xmlns="urn:any"/>')).toMatchObject({
      ok: true,
      header: { method: 'GetQuote' },
    });
  });

  it('is checked after the credential, as a REST call is refused for its credential first', () => {
    expect(read('<t:method>GetPrice</t:method>')).toMatchObject({ cause: 'missing_credential' });
  });
});
