package resourcedir

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// rtEncodingJSON quotes s with encoding/json, HTML escaping on or off.
func rtEncodingJSON(t *testing.T, s string, escapeHTML bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// rtStrings are strings that stress a JSON string encoder.
func rtStrings() []string {
	list := []string{
		"", "plain", "Ada Lovelace", `quote " backslash \ slash /`, "\n\r\t\b\f", "\x00\x01\x1f\x20\x7f",
		"é ж 語 😀", "\u2028\u2029", "a\u2028b\u2029c", "\ufffd", "\xff", "a\xc3", "\xc3(", "\xed\xa0\x80",
		"\xf4\x90\x80\x80", "\xc0\xaf", "\xe2\x80", "\xe2\x80\xa8\xe2\x80", "<>&", "</script>", "a&b<c>d",
		strings.Repeat("x\x00", 100), strings.Repeat("é", 300) + "\x1b",
	}
	for b := 0; b < 256; b++ {
		list = append(list, string([]byte{byte(b)}), "a"+string([]byte{byte(b)})+"z")
	}
	for r := rune(0); r < 0x3100; r += 7 {
		list = append(list, string(r))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, rng.IntN(24))
		for i := range b {
			switch rng.IntN(4) {
			case 0:
				b[i] = byte(rng.IntN(0x20))
			case 1:
				b[i] = byte(0x80 + rng.IntN(0x80))
			default:
				b[i] = byte(0x20 + rng.IntN(0x60))
			}
		}
		list = append(list, string(b))
	}
	return list
}

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range rtStrings() {
		got := appendJSONString([]byte("prefix:"), s)
		if !bytes.HasPrefix(got, []byte("prefix:")) {
			t.Fatalf("%q: the prefix was lost: %q", s, got)
		}
		got = got[len("prefix:"):]
		// Same bytes as encoding/json without HTML escaping, always.
		if want := rtEncodingJSON(t, s, false); !bytes.Equal(got, want) {
			t.Errorf("%q:\n got %s\nwant %s", s, got, want)
		}
		// And as json.Marshal itself when there is nothing HTML to escape.
		if !strings.ContainsAny(s, "<>&") {
			if want, _ := json.Marshal(s); !bytes.Equal(got, want) {
				t.Errorf("%q: got %s, json.Marshal gives %s", s, got, want)
			}
		}
		if !utf8.Valid(got) {
			t.Errorf("%q: output %q is not UTF-8", s, got)
		}
		var back string
		if err := json.Unmarshal(got, &back); err != nil || utf8.ValidString(s) && back != s {
			t.Errorf("%q: decodes to %q (%v)", s, back, err)
		}
	}
}

func TestAppendJSONStringEscapes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"", `""`},
		{`a"b\c`, `"a\"b\\c"`},
		{"\n\r\t", `"\n\r\t"`},
		{"\b\f", `"\b\f"`},
		{"\x00\x01\x1f", `"\u0000\u0001\u001f"`},
		{"\x7f", "\"\x7f\""},
		{"<a & b>", `"<a & b>"`},
		{"\u2028\u2029", `"\u2028\u2029"`},
		{"a\xffb", `"a\ufffdb"`},
		{"\xc3", `"\ufffd"`},
		{"\xed\xa0\x80", `"\ufffd\ufffd\ufffd"`},
		{"é😀", `"é😀"`},
	} {
		if got := string(appendJSONString(nil, c.in)); got != c.want {
			t.Errorf("%q: got %s, want %s", c.in, got, c.want)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\b\f\n", "\xff\u2028<", "é😀\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := appendJSONString(nil, s)
		if want := rtEncodingJSON(t, s, false); !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got %s\nwant %s", s, got, want)
		}
	})
}
