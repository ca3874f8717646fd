import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../../core/settings/config';
import {
  parseSoapSettings,
  SOAP_DEFAULTS,
  SOAP_ENV,
  soapSettingsFromEnv,
  soapSettingsToEnv,
} from '../../../../core/soap/settings';
import { SOAP11 } from './fixtures';

const URL = 'https://soap.example.com/service';

describe('SOAP settings', () => {
  it('requires the backend URL and defaults the rest', () => {
    expect(parseSoapSettings({ soapBackendUrl: URL })).toEqual({
      soapNamespace: SOAP_DEFAULTS.soapNamespace,
      soapBackendUrl: URL,
      soapBackendTimeoutMs: 10_000,
      soapMaxBodyBytes: 1024 * 1024,
      soapMaxDepth: 64,
      soapMaxAttributes: 256,
      soapMaxNamespaces: 256,
    });
    expect(() => parseSoapSettings({ soapBackendUrl: '' })).toThrow(/soapBackendUrl/);
  });

  it('names the setting of every bad value', () => {
    const bad: readonly [Record<string, unknown>, string][] = [
      [{ soapBackendUrl: 'ftp://soap.example.com' }, 'soapBackendUrl'],
      [{ soapBackendUrl: 'not a url' }, 'soapBackendUrl'],
      [{ soapNamespace: 'relative/name' }, 'soapNamespace'],
      [{ soapNamespace: 'urn:has space' }, 'soapNamespace'],
      [{ soapNamespace: SOAP11 }, 'soapNamespace'],
      [{ soapNamespace: 'http://www.w3.org/XML/1998/namespace' }, 'soapNamespace'],
      [{ soapBackendTimeoutMs: 99 }, 'soapBackendTimeoutMs'],
      [{ soapBackendTimeoutMs: 28_001 }, 'soapBackendTimeoutMs'],
      [{ soapMaxBodyBytes: 1023 }, 'soapMaxBodyBytes'],
      [{ soapMaxBodyBytes: 4 * 1024 * 1024 + 1 }, 'soapMaxBodyBytes'],
      [{ soapMaxBodyBytes: 1.5 }, 'soapMaxBodyBytes'],
      [{ soapMaxDepth: 3 }, 'soapMaxDepth'],
      [{ soapMaxDepth: 1001 }, 'soapMaxDepth'],
      [{ soapMaxAttributes: 0 }, 'soapMaxAttributes'],
      [{ soapMaxNamespaces: 10_001 }, 'soapMaxNamespaces'],
    ];
    for (const [input, setting] of bad) {
      let thrown: unknown;
      try {
        parseSoapSettings({ soapBackendUrl: URL, ...input });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ConfigError);
      expect((thrown as ConfigError).setting).toBe(setting);
    }
  });

  it('goes through the Lambda environment and back unchanged', () => {
    const settings = parseSoapSettings({
      soapBackendUrl: URL,
      soapNamespace: 'urn:example:access',
      soapBackendTimeoutMs: 2500,
      soapMaxBodyBytes: 65_536,
      soapMaxDepth: 32,
      soapMaxAttributes: 16,
      soapMaxNamespaces: 8,
    });
    const env = soapSettingsToEnv(settings);
    expect(env[SOAP_ENV.soapBackendUrl]).toBe(URL);
    expect(soapSettingsFromEnv(env)).toEqual(settings);
    expect(() => soapSettingsFromEnv({ ...env, [SOAP_ENV.soapMaxBodyBytes]: 'many' })).toThrow(ConfigError);
  });
});
