import { formatPrice, total } from "./money";

export interface Line {
  name: string;
  cents: number;
  qty: number;
}

/** The invoice for a customer billed in euros. */
export function euroInvoice(lines: Line[]): string {
  const rows = lines.map((l) => `${l.name} x${l.qty}: ${formatPrice(l.cents * l.qty)}`);
  rows.push(`Total: ${formatPrice(total(lines))}`);
  return rows.join("\n");
}
