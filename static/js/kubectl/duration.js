// @ts-check
// kubectl's AGE column: a port of k8s.io/apimachinery/pkg/util/duration.HumanDuration, so the
// panels print exactly what `kubectl get` prints for the same timestamps.

export function humanDuration(seconds) {
  const whole = Math.trunc(seconds);
  if (whole < -1) return "<invalid>";
  if (whole < 0) return "0s";
  if (whole < 60 * 2) return `${whole}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = whole % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(seconds / 3600);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    const y = Math.trunc(hours / 24 / 365);
    return dy === 0 ? `${y}y` : `${y}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

/** Age of an RFC 3339 timestamp at virtual epoch milliseconds `nowMs`, or "<unknown>". */
export function age(timestamp, nowMs) {
  const ms = Date.parse(timestamp ?? "");
  if (Number.isNaN(ms)) return "<unknown>";
  return humanDuration((nowMs - ms) / 1000);
}

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** Go's time.RFC1123Z in UTC ("Thu, 01 Jan 2026 00:01:05 +0000"), as `kubectl describe` prints. */
export function rfc1123z(timestamp) {
  const ms = Date.parse(timestamp ?? "");
  if (Number.isNaN(ms)) return "Mon, 01 Jan 0001 00:00:00 +0000"; // Go's zero time
  const d = new Date(ms);
  const p = (n) => String(n).padStart(2, "0");
  return `${DAYS[d.getUTCDay()]}, ${p(d.getUTCDate())} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} ` +
    `${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`;
}
