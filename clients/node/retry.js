// How long to wait before retrying, from the provider's own evidence: the port of the
// service's classifier/engine/retry_after.py (and classifier/durations.py), whose docstring is
// the definition, held to it by clients/spec/vectors/retry_after.json (the engine is the
// oracle) and by the `bundle` vectors with a `now`.
//
// The sources, most specific first (the first that reads wins; one that does not read is
// skipped):
//   1. retry-after-ms          milliseconds
//   2. x-ms-retry-after-ms     milliseconds
//   3. retry-after             seconds, or an HTTP date (RFC 9110's three forms)
//   4. google.rpc.retry_info.retry_delay   a proto Duration (`25s`, `0.5s`)
//   5. x-ratelimit-reset-requests / -tokens   Go durations (`6m0s`): the later of the two
//   6. anthropic-ratelimit-*-reset   RFC 3339 timestamps: the latest
// A date becomes a wait from the provider's own `date` header when it reads, else from the
// runtime's clock; a date past is 0. A wait longer than the cap is the cap, `capped`.
//
// Why dates are parsed here rather than with Date.parse: Date.parse reads whatever the engine
// likes (implementation-defined past ISO's one form: it takes "2026-01-01" as UTC and
// "2026-01-01T00:00" as local time, rolls 31 Feb over to March, and reads the obsolete HTTP
// forms or not depending on the version), where the service reads exactly the forms below and
// skips anything else. Numbers are ASCII digits (Number() would read " 0x10 " and "1e3").
// Every wait is kept in whole microseconds, the engine's resolution (a Python timedelta),
// rounded as a timedelta rounds (half to even), so `seconds` is the engine's double exactly.
'use strict';

const { strip } = require('./facts');

const H = 'http.response.header.';
const RETRY_AFTER_MS = `${H}retry-after-ms`;
const X_MS_RETRY_AFTER_MS = `${H}x-ms-retry-after-ms`;
const RETRY_AFTER = `${H}retry-after`;
const RETRY_DELAY = 'google.rpc.retry_info.retry_delay';
const OPENAI_RESETS = [`${H}x-ratelimit-reset-requests`, `${H}x-ratelimit-reset-tokens`];
const ANTHROPIC_RESETS = ['requests', 'tokens', 'input-tokens', 'output-tokens'].map((l) => `${H}anthropic-ratelimit-${l}-reset`);
const DATE = `${H}date`;
// Every attribute a wait is read from, in the order of precedence.
const SOURCES = Object.freeze([RETRY_AFTER_MS, X_MS_RETRY_AFTER_MS, RETRY_AFTER, RETRY_DELAY, ...OPENAI_RESETS, ...ANTHROPIC_RESETS]);
// What retry_after_source ends with on the wire when the cap cut the wait.
const CAPPED_LABEL = ' (capped)';

// --- durations (classifier/durations.py) ----------------------------------------------------

const DECIMAL = /^[0-9]+(?:\.[0-9]+)?$/;
const PROTO = /^([0-9]+)(\.[0-9]{1,9})?s$/;
const GO_PART = /([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)/y;
const GO_UNITS = { ns: 1e-9, us: 1e-6, '\u00b5s': 1e-6, '\u03bcs': 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };

// A non-negative decimal number (`20`, `1.5`), or null; too large for a double is Infinity.
function decimalSeconds(text) {
  const t = strip(text);
  return DECIMAL.test(t) ? Number(t) : null;
}

// proto3 JSON's Duration: seconds with up to nine decimals and an `s`, or null.
function protoDuration(text) {
  const t = strip(text);
  return PROTO.test(t) ? Number(t.slice(0, -1)) : null;
}

// Go's time.Duration text (`6m0s`, `1.5h`, `20ms`, `2h3m4.5s`), or `0`; no sign. Or null.
function goDuration(text) {
  const t = strip(text);
  if (t === '0') return 0;
  if (!t) return null;
  let total = 0;
  GO_PART.lastIndex = 0;
  while (GO_PART.lastIndex < t.length) {
    const m = GO_PART.exec(t);
    if (m === null) return null;
    total += Number(m[1]) * GO_UNITS[m[2]];
  }
  return total;
}

// --- instants: whole seconds since the epoch and microseconds -------------------------------

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];

function daysInMonth(year, month) {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
function daysFromCivil(y, m, d) {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

// The instant of a calendar date and time at a UTC offset (seconds), or null when a field is
// out of range (as a Python datetime refuses it: year 1-9999, no second 60, no hour 24).
function instant(year, month, day, hour, minute, second, micros, offset) {
  if (year < 1 || year > 9999 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  return { s: daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset, us: micros };
}

const HMS = '([0-9]{2}):([0-9]{2}):([0-9]{2})';
const DAY_NAME = '([A-Za-z]+)';
// RFC 9110's HTTP-date: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850
// form (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`, no zone:
// GMT). Names in any case, as the service reads them; a zone of GMT (or UTC, UT).
const IMF = new RegExp(`^(?:${DAY_NAME},\\s*)?([0-9]{1,2}) ([A-Za-z]{3}) ([0-9]{4}) ${HMS} (GMT|UTC|UT)$`, 'i');
const RFC850 = new RegExp(`^${DAY_NAME},\\s*([0-9]{1,2})-([A-Za-z]{3})-([0-9]{2}) ${HMS} (GMT|UTC|UT)$`, 'i');
const ASCTIME = new RegExp(`^${DAY_NAME} ([A-Za-z]{3}) +([0-9]{1,2}) ${HMS} ([0-9]{4})$`, 'i');

// Before a comma any word is the day's name, as the service's reader drops it unread; asctime's
// (no comma) must be one.
function dayName(name, comma = true) {
  return name === undefined || comma || DAYS.includes(name.toLowerCase());
}

function month(name) {
  return MONTHS.indexOf(name.toLowerCase()) + 1; // 0: not a month
}

// An HTTP date's instant, or null.
function httpDate(value) {
  const t = strip(value);
  let m = IMF.exec(t);
  if (m) {
    const mo = month(m[3]);
    return dayName(m[1]) && mo ? instant(+m[4], mo, +m[2], +m[5], +m[6], +m[7], 0, 0) : null;
  }
  m = RFC850.exec(t);
  if (m) {
    const mo = month(m[3]);
    const yy = +m[4];
    // a two-digit year as the service's reader takes it (Python's email.utils: 69-99 is 19xx)
    return dayName(m[1]) && mo ? instant(yy > 68 ? 1900 + yy : 2000 + yy, mo, +m[2], +m[5], +m[6], +m[7], 0, 0) : null;
  }
  m = ASCTIME.exec(t);
  if (m) {
    const mo = month(m[2]);
    return dayName(m[1], false) && mo ? instant(+m[7], mo, +m[3], +m[4], +m[5], +m[6], 0, 0) : null;
  }
  return null;
}

// RFC 3339 with its offset (`2025-06-01T12:00:30Z`, `...30.250+01:00`); fractions past the
// microsecond are cut, as the service's reader cuts them. Without a zone it says nothing
// certain: null.
const RFC3339 = /^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?(?:(Z)|([+-])([0-9]{2}):([0-9]{2}))$/;

function timestamp(value) {
  const m = RFC3339.exec(strip(value));
  if (!m) return null;
  let offset = 0;
  if (!m[8]) {
    const oh = +m[10];
    const om = +m[11];
    if (oh > 23 || om > 59) return null;
    offset = (m[9] === '-' ? -1 : 1) * (oh * 3600 + om * 60);
  }
  const micros = m[7] ? +m[7].slice(0, 6).padEnd(6, '0') : 0;
  return instant(+m[1], +m[2], +m[3], +m[4], +m[5], +m[6], micros, offset);
}

// The runtime's clock as an instant: `now` a Date, epoch milliseconds, or a function giving
// either (Date.now by default).
function nowInstant(now) {
  let t = typeof now === 'function' ? now() : now;
  if (t === undefined || t === null) t = Date.now();
  const ms = t instanceof Date ? t.getTime() : Number(t);
  if (!Number.isFinite(ms)) throw new TypeError(`now: not a time (${t})`);
  const s = Math.floor(ms / 1000);
  return { s, us: Math.round((ms - s * 1000) * 1000) };
}

// --- the wait -------------------------------------------------------------------------------

// Seconds (a double) as whole microseconds, rounded as a Python timedelta rounds (half to even).
function micros(seconds) {
  const whole = Math.trunc(seconds);
  const frac = (seconds - whole) * 1e6;
  const us = Math.trunc(frac);
  const left = frac - us;
  let total = whole * 1e6 + us;
  if (left > 0.5 || (left === 0.5 && total % 2 !== 0)) total += 1;
  return total;
}

// The wait the evidence asks for, capped: {seconds, micros, ms, source, capped}, or null when
// no attribute says one. `attributes`: the descriptor's (name -> text); `capSeconds`: the
// rule's cap; `now`: the runtime's clock (nowInstant's forms), read only when a date must
// become a wait and the provider's `date` header does not read. The caller decides the answer
// is retryable: a wait is never advised for one that is not.
function retryAfter(attributes, capSeconds, now) {
  if (!attributes || !SOURCES.some((s) => Object.hasOwn(attributes, s))) return null;
  let clock = null;
  const at = () => {
    if (clock === null) clock = (Object.hasOwn(attributes, DATE) ? httpDate(String(attributes[DATE])) : null) || nowInstant(now);
    return clock;
  };
  const until = (when) => {
    if (when === null) return null;
    const from = at();
    const us = (when.s - from.s) * 1e6 + (when.us - from.us);
    return us > 0 ? us / 1e6 : 0;
  };
  const one = (name, read) => {
    if (!Object.hasOwn(attributes, name)) return null;
    const seconds = read(String(attributes[name]));
    return seconds === null ? null : [name, seconds];
  };
  const latest = (names, read) => {
    let best = null;
    for (const name of names) {
      const f = one(name, read);
      if (f !== null && (best === null || f[1] > best[1])) best = f;
    }
    return best;
  };
  const found = one(RETRY_AFTER_MS, milliseconds)
    ?? one(X_MS_RETRY_AFTER_MS, milliseconds)
    ?? one(RETRY_AFTER, (v) => {
      const s = decimalSeconds(v);
      return s !== null ? s : until(httpDate(v));
    })
    ?? one(RETRY_DELAY, protoDuration)
    ?? latest(OPENAI_RESETS, goDuration)
    ?? latest(ANTHROPIC_RESETS, (v) => until(timestamp(v)));
  if (found === null) return null;
  const [source, seconds] = found;
  const capped = seconds > capSeconds;
  const us = micros(capped ? capSeconds : seconds);
  return Object.freeze({ seconds: us / 1e6, micros: us, ms: us / 1000, source, capped });
}

function milliseconds(value) {
  const ms = decimalSeconds(value);
  return ms === null ? null : ms / 1000;
}

// The wait as the wire's retry_after (a google.protobuf.Duration, as grpc-js gives it with
// longs as numbers) and retry_after_source (the attribute, ` (capped)` when the cap cut it).
function wireFields(wait) {
  return {
    retry_after: Object.freeze({ seconds: Math.floor(wait.micros / 1e6), nanos: (wait.micros % 1e6) * 1000 }),
    retry_after_ms: wait.ms,
    retry_after_source: wait.capped ? `${wait.source}${CAPPED_LABEL}` : wait.source,
  };
}

// An answer's wait in the vectors' spelling ({seconds, source, capped}), or null: read back
// from what the answer carries (local or served alike).
function waitOf(answer) {
  if (!answer.retry_after) return null;
  const us = Number(answer.retry_after.seconds || 0) * 1e6 + Math.round(Number(answer.retry_after.nanos || 0) / 1000);
  const labelled = answer.retry_after_source;
  const capped = labelled.endsWith(CAPPED_LABEL);
  return { seconds: us / 1e6, source: capped ? labelled.slice(0, -CAPPED_LABEL.length) : labelled, capped };
}

module.exports = {
  CAPPED_LABEL, SOURCES, decimalSeconds, goDuration, httpDate, nowInstant, protoDuration, retryAfter, timestamp, waitOf, wireFields,
};
