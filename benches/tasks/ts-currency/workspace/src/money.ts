/** Cents to a display string: 1999 -> "$19.99". */
export function formatPrice(cents: number): string {
  const sign = cents < 0 ? "-" : "";
  const abs = Math.abs(cents);
  return `${sign}$${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")}`;
}

/** Sum of line totals, in cents. */
export function total(lines: { cents: number; qty: number }[]): number {
  return lines.reduce((sum, line) => sum + line.cents * line.qty, 0);
}
