// @ts-check
// A zone's header: its name, the node lifecycle controller's disruption state of it, how many of
// its nodes are Ready, and its eviction rate limiter (rate, tokens, queue). One builder for the
// cluster view's lists and for the overview of a large cluster.
import { el } from "#js/dom.js";

const QUEUE_TITLE = 20; // queued nodes named in the overview header's tooltip

/**
 * Fills `head` for `zone` (`z`: the controller's state of it, `controllers.zones[zone]`) unless it
 * already shows the same. `layout`: "flow" (one wrapping line), "lines" (two fixed lines, the
 * queue cut short, in full in the tooltip), or "overview" (wrapping, with the queue's length: a
 * large zone's queue holds hundreds of nodes; the first of them in the tooltip).
 * @param {HTMLElement & {__shown?: string}} head
 * @param {(key: string, params?: object) => string} t
 * @param {{zone: string, z?: {queue?: string[], state?: string, rate?: number, tokens?: number}, ready: number,
 *   total: number, layout?: string}} what
 */
export function fillZoneHead(head, t, { zone, z = {}, ready, total, layout = "flow" }) {
  const queue = z.queue ?? [];
  const overview = layout === "overview";
  const signature = JSON.stringify([layout, zone, z.state, z.rate, z.tokens,
    overview ? [queue.length, queue.slice(0, QUEUE_TITLE)] : queue, ready, total]);
  if (head.__shown === signature) return;
  head.__shown = signature;
  const name = el("span", "zone-name", zone || t("cluster.no-zone"));
  name.translate = false;
  const stateName = z.state ?? "Initial";
  const state = el("span", `zone-state state-${stateName}`, t(`zone-state.${stateName}`));
  state.dataset.state = stateName;
  const main = [name, state];
  if (total) {
    const count = el("span", `zone-count${ready < total ? " degraded" : ""}`,
      t("cluster.zone-ready", { ready, total }));
    count.dataset.ready = String(ready);
    count.dataset.total = String(total);
    main.push(count);
  }
  const limiter = [];
  if (z.rate !== undefined) limiter.push(el("span", "zone-rate", t("cluster.rate", { rate: z.rate })));
  if (z.tokens !== undefined) {
    limiter.push(el("span", "zone-tokens", t("cluster.tokens", { tokens: Number(z.tokens).toFixed(2) })));
  }
  if (overview && z.queue) {
    const length = el("span", "zone-queue", t("cluster.queue-length", { n: queue.length }));
    length.dataset.queue = String(queue.length);
    limiter.push(length);
  } else if (queue.length) {
    limiter.push(el("span", "zone-queue", t("cluster.queue", { nodes: queue.join(", ") })));
  }
  if (overview) {
    const named = queue.slice(0, QUEUE_TITLE).join(", ") + (queue.length > QUEUE_TITLE ? ", …" : "");
    head.title = queue.length ? t("cluster.queue", { nodes: named }) : "";
  }
  if (layout !== "lines") {
    head.replaceChildren(...main, ...limiter);
    return;
  }
  const line1 = el("div", "zone-line");
  line1.append(...main);
  const line2 = el("div", "zone-line");
  line2.append(...limiter);
  head.title = queue.length ? t("cluster.queue", { nodes: queue.join(", ") }) : "";
  head.replaceChildren(line1, line2);
}
