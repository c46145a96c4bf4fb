// A payment as the payments provider answers it and a ticket order records it: shared by the
// events area, which takes it, and the scanner, which writes the order with the tickets it pays.
/** `amount` in minor units as the provider answers; a purchase records it in major units (./money.ts). */
export interface Payment {
  id: string;
  provider: string;
  status: 'succeeded';
  amount: number;
  currency: string;
  method: string;
  createdAt: string;
}
