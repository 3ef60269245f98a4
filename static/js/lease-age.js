// @ts-check
// How old a node's Lease is against the node lifecycle controller's grace period. One reading for
// every place that shows it: the node cards and rows, the overview's cells and their labels.

/** Seconds since the renewal at virtual time `now` (never below 0: the clock interpolates). */
export const leaseAge = (now, renew) => Math.max(0, now - renew);

/**
 * Whole seconds from the renewal's second to the clock's: every age on the page then turns in
 * the same pass, once a second, instead of each in a pass of its own.
 */
export const wholeLeaseAge = (now, renew) => Math.max(0, Math.floor(now) - Math.floor(renew));

/** "ok" up to half the grace period, "warn" past it, "over" once it ran out. */
export const leaseLevel = (age, grace) => (age >= grace ? "over" : age > grace / 2 ? "warn" : "ok");

/**
 * The part of the grace period used, in whole `steps` (0 .. steps; `steps` once it ran out): a
 * coarse gauge that moves only a few times while a Lease ages. With 3 steps a Lease renewed on
 * time (every 10 s, against a grace period of 40 or 50 s) stays in step 0.
 */
export const leaseStep = (age, grace, steps) => Math.min(steps, Math.floor((age / grace) * steps));
