// @ts-check
// A port of Go's text/tabwriter (left aligned, no flags), the writer kubectl prints through.
// Column blocks follow Go's rule: a column's width is set by the consecutive lines that have
// a tab-terminated cell in it, so `describe` sections align the way kubectl aligns them.

export class TabWriter {
  constructor({ minwidth = 0, padding = 1 } = {}) {
    this.minwidth = minwidth;
    this.padding = padding;
    this.text = "";
  }

  write(text) {
    this.text += text;
    return this;
  }

  flush() {
    const source = this.text.endsWith("\n") ? this.text.slice(0, -1) : this.text;
    const lines = source.split("\n").map((line) => line.split("\t"));
    const out = [];
    this.#format(lines, 0, lines.length, [], out);
    this.text = "";
    return out.join("\n") + (source.length || lines.length > 1 ? "\n" : "");
  }

  #format(lines, line0, line1, widths, out) {
    const column = widths.length;
    for (let row = line0; row < line1; row++) {
      if (column >= lines[row].length - 1) continue;
      this.#writeLines(lines, line0, row, widths, out);
      line0 = row;
      let width = this.minwidth;
      for (; row < line1; row++) {
        const cells = lines[row];
        if (column >= cells.length - 1) break;
        width = Math.max(width, [...cells[column]].length + this.padding);
      }
      this.#format(lines, line0, row, [...widths, width], out);
      line0 = row; // the line that ended the block has no cell here: the loop skips it
    }
    this.#writeLines(lines, line0, line1, widths, out);
  }

  #writeLines(lines, from, to, widths, out) {
    for (let row = from; row < to; row++) {
      const cells = lines[row];
      let text = "";
      cells.forEach((cell, j) => {
        text += cell;
        if (j < widths.length && j < cells.length - 1) {
          text += " ".repeat(Math.max(0, widths[j] - [...cell].length));
        }
      });
      out.push(text);
    }
  }
}

/** `kubectl get` tables: printers.GetNewTabWriter (minwidth 6, padding 3). */
export function table(rows) {
  const w = new TabWriter({ minwidth: 6, padding: 3 });
  for (const row of rows) w.write(row.join("\t") + "\n");
  return w.flush();
}
