/** The platform's XML answers, built as strings in exactly its shape (no whitespace between elements). */

import type { PeriodWindow } from '../../core/budget/periods';
import { formatPlatformTime } from '../../core/platform/encoding';
import type { Period } from '../../core/platform/types';

export const XML_CONTENT_TYPE = 'application/vnd.3scale-v2.0+xml';
export const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

/** Text content escaping; the platform's messages quote the values they name with plain `"`. */
export function escapeXmlText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function errorXml(code: string, message: string): string {
  return `${DECLARATION}<error code="${code}">${escapeXmlText(message)}</error>`;
}

export interface UsageReportView {
  readonly metric: string;
  readonly period: Period;
  readonly window: PeriodWindow;
  readonly max: number;
  /** The counter before this request: `exceeded` compares it with max. */
  readonly stored: number;
  /** The value shown: on an authorized authrep it includes this request's usage. */
  readonly current: number;
}

export interface StatusView {
  readonly authorized: boolean;
  readonly reasonText?: string;
  readonly plan: string;
  readonly reports: readonly UsageReportView[];
  /** Set with `hierarchy=1`: the direct children of each reported metric. */
  readonly childrenOf?: (metric: string) => readonly string[];
}

function usageReportXml(report: UsageReportView): string {
  const exceeded = report.stored > report.max ? ' exceeded="true"' : '';
  const window =
    report.window.end === undefined
      ? ''
      : `<period_start>${formatPlatformTime(report.window.start)}</period_start>` +
        `<period_end>${formatPlatformTime(report.window.end)}</period_end>`;
  return (
    `<usage_report metric="${report.metric}" period="${report.period}"${exceeded}>${window}` +
    `<max_value>${report.max}</max_value><current_value>${report.current}</current_value></usage_report>`
  );
}

export function statusXml(status: StatusView): string {
  const authorization = status.authorized
    ? '<authorized>true</authorized>'
    : `<authorized>false</authorized><reason>${escapeXmlText(status.reasonText ?? '')}</reason>`;
  const reports =
    status.reports.length === 0
      ? ''
      : `<usage_reports>${status.reports.map(usageReportXml).join('')}</usage_reports>`;
  const { childrenOf } = status;
  const hierarchy =
    childrenOf === undefined
      ? ''
      : `<hierarchy>${status.reports
          .map(
            (report) => `<metric name="${report.metric}" children="${childrenOf(report.metric).join(' ')}"/>`,
          )
          .join('')}</hierarchy>`;
  return `${DECLARATION}<status>${authorization}<plan>${escapeXmlText(status.plan)}</plan>${reports}${hierarchy}</status>`;
}

/** Attribute and text escaping of values the Account Management API's answers carry. */
export function escapeXmlValue(text: string): string {
  return escapeXmlText(text).replace(/"/g, '&quot;');
}

export function element(name: string, value: string): string {
  return `<${name}>${escapeXmlValue(value)}</${name}>`;
}

export interface LimitView {
  readonly plan: string;
  readonly metric: string;
  readonly period: Period;
  readonly value: number;
}

export function limitAnswerXml(limit: LimitView): string {
  return (
    `${DECLARATION}<limit><id>${escapeXmlValue(limit.period)}</id>${element('metric_id', limit.metric)}` +
    `${element('plan_id', limit.plan)}${element('period', limit.period)}<value>${limit.value}</value></limit>`
  );
}

/** The Account Management API's error answer: `<errors><error>...</error></errors>`. */
export function adminErrorXml(message: string): string {
  return `${DECLARATION}<errors>${element('error', message)}</errors>`;
}
