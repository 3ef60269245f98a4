// @ts-check
// Virtual time helpers shared by every panel. The run's clock lives in the worker; the page
// only interpolates between frames so that countdown bars move smoothly.

/** Parses an RFC 3339 timestamp (seconds or microseconds) into epoch milliseconds. */
export function parseTime(value) {
  if (!value) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/** Clock interpolation: the last clock a frame carried plus wall time since, times speed. */
export class VirtualClock {
  constructor(now = () => performance.now()) {
    this.wallNow = now;
    this.t = 0;
    this.speed = 1;
    this.paused = true;
    this.receivedAt = now();
    this.startMs = 0; // epoch ms of virtual time zero (scenario startTime)
  }

  /** Takes a `{t, speed, paused}` clock from a snapshot or frame. Never runs backwards. */
  update(clock) {
    if (!clock) return;
    const current = this.now();
    this.t = Math.max(clock.t, Math.min(current, clock.t + 0.5 * (clock.speed || 1)));
    if (clock.paused) this.t = clock.t;
    this.speed = clock.speed ?? this.speed;
    this.paused = Boolean(clock.paused);
    this.preparing = Boolean(clock.preparing); // a large cluster's start-up, simulated before going live
    this.limitedFrom = clock.limited_from ?? null; // the speed asked for, when the workers keep less
    this.fastForward = clock.fast_forward ?? null; // a lesson's "Next step" running to {step}
    this.receivedAt = this.wallNow();
  }

  /** Sets virtual time zero from a snapshot's `time` (RFC 3339 at snapshot `t`). */
  anchor(time, t) {
    const ms = parseTime(time);
    if (ms !== null) this.startMs = ms - t * 1000;
  }

  /** Virtual seconds since the start of the run, interpolated. */
  now() {
    if (this.paused) return this.t;
    return this.t + ((this.wallNow() - this.receivedAt) / 1000) * this.speed;
  }

  /** Virtual epoch milliseconds, for ages printed the way kubectl prints them. */
  nowMs() {
    return this.startMs + this.now() * 1000;
  }

  /** Virtual seconds of an RFC 3339 timestamp. */
  secondsOf(time) {
    const ms = parseTime(time);
    return ms === null ? null : (ms - this.startMs) / 1000;
  }
}

const pad = (n, width = 2) => String(n).padStart(width, "0");

/** "T+01:23.4" style offset used on the clock bar, the timeline and the sequence gutter. */
export function formatOffset(seconds, { tenths = true } = {}) {
  const sign = seconds < 0 ? "-" : "";
  const s = Math.abs(seconds);
  const whole = Math.floor(s);
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const sec = whole % 60;
  const frac = tenths ? `.${Math.min(9, Math.floor((s - whole) * 10 + 1e-6))}` : ""; // (115.3 - 115 is 0.2999...)
  const head = h > 0 ? `${h}:${pad(m)}` : pad(m);
  return `${sign}${head}:${pad(sec)}${frac}`;
}

/** Wall-clock time of day in UTC, "00:05:12". */
export function formatUtc(ms) {
  const d = new Date(ms);
  return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** A short countdown such as "4m12s" or "9.5s". */
export function formatCountdown(seconds) {
  if (seconds <= 0) return "0s";
  if (seconds < 10) return `${seconds.toFixed(1)}s`;
  const whole = Math.ceil(seconds);
  if (whole < 60) return `${whole}s`;
  const m = Math.floor(whole / 60);
  const s = whole % 60;
  return s ? `${m}m${s}s` : `${m}m`;
}

/**
 * What an eviction countdown shows at virtual time `now`: `share`, the part of its wait still
 * ahead rounded to 1/`steps` (a bar is written only when it moves a step), and `shown`, the
 * seconds left as printed (whole seconds, tenths in the last ten).
 */
export function countdownAt(eviction, now, steps) {
  const left = eviction.fireAt - now;
  const total = Math.max(1, eviction.fireAt - eviction.scheduledAt);
  return {
    left,
    share: Math.round(Math.max(0, Math.min(1, left / total)) * steps) / steps,
    shown: left < 10 ? Math.max(0, Math.ceil(left * 10) / 10) : Math.ceil(left),
  };
}
