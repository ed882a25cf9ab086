package resourcedir

import "testing"

func TestMainEditDistance(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "ab", 2}, {"addr", "addr", 0}, {"adr", "addr", 1},
		{"kitten", "sitting", 3}, {"INTERVALL", "INTERVAL", 1}, {"ab", "ba", 2},
	} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
