// @ts-check
// UI strings come translated from Django (gettext) in a JSON block of the page: one catalogue
// for templates and scripts, so the zh-hans .po file covers everything the page can show.

export function makeTranslator(strings) {
  /** t("cluster.lease-age", {age: 3.2}) -> the page language's text with {placeholders} filled. */
  return function t(key, params = {}, fallback) {
    let text = strings[key];
    if (text === undefined) text = fallback ?? key;
    return text.replace(/\{(\w+)\}/g, (m, name) => (params[name] !== undefined ? String(params[name]) : m));
  };
}

export function readJson(id) {
  const node = document.getElementById(id);
  return node ? JSON.parse(node.textContent) : null;
}
