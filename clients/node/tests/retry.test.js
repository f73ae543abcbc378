// The readers of retry.js past the retry_after vectors: what Date.parse and Number() would
// take and the service does not (each checked against the service's reader:
// email.utils.parsedate_to_datetime, datetime.fromisoformat, classifier/durations.py), and
// the rounding of a wait to whole microseconds as a Python timedelta rounds it.
'use strict';

const assert = require('node:assert/strict');
const { test } = require('node:test');
const retry = require('../retry');

const at = (t) => (t === null ? null : t.s * 1e6 + t.us);
const utc = (iso) => Date.UTC(...iso) * 1000;

test('HTTP dates: the three forms of RFC 9110, names in any case, nothing Date.parse would guess at', () => {
  const t = utc([2026, 0, 1, 0, 0, 30]);
  assert.equal(at(retry.httpDate('Thu, 01 Jan 2026 00:00:30 GMT')), t);
  assert.equal(at(retry.httpDate('thu, 1 jan 2026 00:00:30 gmt')), t);
  assert.equal(at(retry.httpDate('01 Jan 2026 00:00:30 GMT')), t, 'the day name is optional in the IMF form');
  assert.equal(at(retry.httpDate('Thursday, 01-Jan-26 00:00:30 GMT')), t);
  assert.equal(at(retry.httpDate('Thursday, 01-Jan-69 00:00:30 GMT')), utc([1969, 0, 1, 0, 0, 30]), '69-99 is 19xx');
  assert.equal(at(retry.httpDate('Thu Jan  1 00:00:30 2026')), t);
  assert.equal(at(retry.httpDate(' Thu, 01 Jan 2026 00:00:30 GMT\u3000')), t, 'stripped as the service strips');
  assert.equal(at(retry.httpDate('Someday, 01 Jan 2026 00:00:30 GMT')), t, 'a word before the comma is not read, as the service does not');
  for (const bad of ['2026-01-01', '2026-01-01T00:00:30Z', 'Thu, 31 Feb 2026 00:00:00 GMT', 'Thu, 01 Jan 2026 24:00:00 GMT',
    'Thu, 01 Jan 2026 00:00:60 GMT', 'Thu, 01 Foo 2026 00:00:30 GMT', 'Someday Jan  1 00:00:30 2026', '1767225630', 'soon', '']) {
    assert.equal(retry.httpDate(bad), null, bad);
  }
});

test('RFC 3339 timestamps: an offset required, fractions cut at the microsecond, no date alone', () => {
  assert.equal(at(retry.timestamp('2026-01-01T00:00:05.1234567Z')), utc([2026, 0, 1, 0, 0, 5]) + 123456);
  assert.equal(at(retry.timestamp('2026-01-01t01:00:05+01:00')), utc([2026, 0, 1, 0, 0, 5]));
  assert.equal(at(retry.timestamp('2024-02-29T00:00:00-00:30')), utc([2024, 1, 29, 0, 30, 0]));
  for (const bad of ['2026-01-01T00:00:30', '2026-01-01', '2026-01-01T00:00:30z', '2026-02-29T00:00:00Z', '2026-01-01T00:00:30+24:00',
    '2026-01-01 00:00:30Z', 'Thu, 01 Jan 2026 00:00:30 GMT']) {
    assert.equal(retry.timestamp(bad), null, bad);
  }
});

test('numbers: ASCII digits with a fraction, no sign, no exponent, no hex; Go and proto durations', () => {
  assert.equal(retry.decimalSeconds(' 20 '), 20);
  assert.equal(retry.decimalSeconds('1.25'), 1.25);
  for (const bad of ['0x10', '1e3', '-1', '+1', '1.', '.5', 'Infinity', '\u0662\u0660', '']) assert.equal(retry.decimalSeconds(bad), null, bad);
  assert.equal(retry.decimalSeconds('9'.repeat(400)), Infinity);
  assert.equal(retry.goDuration('1h2m3.5s'), 3723.5);
  assert.equal(retry.goDuration('1.s'), 1);
  assert.equal(retry.goDuration('.5s'), 0.5);
  assert.equal(retry.goDuration('0'), 0);
  for (const bad of ['12', '-1s', '1d', '1s ms', '']) assert.equal(retry.goDuration(bad), null, bad);
  assert.equal(retry.protoDuration('0.000000001s'), 1e-9);
  assert.equal(retry.protoDuration('1.0000000001s'), null, 'ten decimals');
});

test('a wait is whole microseconds, half to even as a timedelta rounds, capped at the cap', () => {
  const wait = (ms) => retry.retryAfter({ 'http.response.header.retry-after-ms': ms }, 60, 0);
  assert.equal(wait('0.0005').micros, 0, '0.5 us: to even');
  assert.equal(wait('0.0015').micros, 2, '1.5 us: to even');
  assert.equal(wait('20000.5').seconds, 20.0005);
  assert.deepEqual({ ...wait('60001') }, { seconds: 60, micros: 60e6, ms: 60000, source: 'http.response.header.retry-after-ms', capped: true });
  assert.equal(retry.retryAfter({ 'http.response.header.date': 'Thu, 01 Jan 2026 00:00:00 GMT' }, 60, 0), null, 'a date is no evidence');
  const clock = () => utc([2026, 0, 1, 0, 0, 0]) / 1000;
  assert.equal(retry.retryAfter({ 'http.response.header.retry-after': 'Thu, 01 Jan 2026 00:00:09 GMT' }, 60, clock).seconds, 9, 'the clock, with no date header');
});
