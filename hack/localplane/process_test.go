package localplane

import "testing"

// The metrics and probe addresses of one controller come from one call: they must never
// be the same port, which two calls one after the other could give.
func TestFreeAddressesAreDistinct(t *testing.T) {
	for range 200 {
		addrs, err := FreeAddresses(2)
		if err != nil {
			t.Fatal(err)
		}
		if len(addrs) != 2 || addrs[0] == addrs[1] {
			t.Fatalf("FreeAddresses(2) = %v, want two distinct addresses", addrs)
		}
	}
}
