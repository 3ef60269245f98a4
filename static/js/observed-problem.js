// @ts-check
// A real cluster's failing watch in the page's language (docs/observe.md "Errors"). The observing driver sends the
// problem's kind and fields beside its English sentence (heartbeat_site/observe/cluster.py SENTENCES); a page whose
// strings lack the kind says the sentence.

/** @typedef {{kind?: string, server?: string, resource?: string, status?: number, detail?: string}} WatchProblem */

/**
 * The problem as the page's strings say it.
 * @param {(key: string, params?: object, fallback?: string) => string} t  the page's translator (i18n.js)
 * @param {WatchProblem | null | undefined} problem
 * @param {string} sentence  the driver's English sentence
 */
export function sayProblem(t, problem, sentence) {
  if (!problem?.kind) return sentence;
  const what = t(`observed.what.${problem.resource}`, {}, problem.resource ?? "");
  return t(`observed.why.${problem.kind}`, { ...problem, what }, sentence);
}
