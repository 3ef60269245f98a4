// @ts-check
// What one cell of the cluster overview says about its node, as data: no DOM here, so the same
// reading serves the drawing, the cell's accessible name and the tests.
import { nodeStatus, readyOf, taintString, taintsOf } from "#js/k8s.js";

/** The strongest scheduling taint on a node: "NoExecute", "NoSchedule" or "" (none, or only PreferNoSchedule). */
export function taintMark(node) {
  let mark = "";
  for (const taint of taintsOf(node)) {
    if (taint.effect === "NoExecute") return "NoExecute";
    if (taint.effect === "NoSchedule") mark = "NoSchedule";
  }
  return mark;
}

/**
 * A cell's node state: `status`, kubectl's STATUS column (so Ready=Unknown reads NotReady, and
 * a cordoned node gets ",SchedulingDisabled"); `ready`, whether it counts in its zone's Ready
 * nodes (Ready=True, as the zone header counts); `taint`, its corner mark.
 */
export function cellState(node) {
  return { status: nodeStatus(node), ready: readyOf(node) === "True", taint: taintMark(node) };
}

/**
 * The cell's accessible name and tooltip: everything its colour and marks say, in words.
 * `lease`: the Lease age as the cards print it.
 */
export function cellLabel(t, name, node, lease) {
  const parts = [name, nodeStatus(node)];
  const ready = readyOf(node);
  if (ready !== null && ready !== "True") parts.push(`Ready=${ready}`); // NotReady: False or Unknown?
  const taints = taintsOf(node).map(taintString);
  parts.push(taints.length ? t("overview.taints", { taints: taints.join(", ") }) : t("overview.no-taints"));
  parts.push(lease);
  return parts.join(" · ");
}
