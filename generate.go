package resourcedir

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Generated directories: realistic enough to demo and to load-test with, and
// salted with the values that break clients (genEdges), so that a client's
// tests meet them on a laptop. The same seed always gives the same items, in
// the same order, whatever the count: a longer run extends a shorter one.

// maxGenerateCount bounds POST /__admin/generate: a hundred thousand items
// is a few tens of megabytes of JSON.
const maxGenerateCount = 100_000

// genItem is one seed item: a value for each string field but Id, which
// the seed derives (nil is null), Types and Address. json writes every key
// in the API's order (propTable), null beside "" as the API shows them.
type genItem struct {
	vals    [numStringFields]*string
	types   []genType
	address *genAddress
}

func (it genItem) json() []byte {
	b := []byte{'{'}
	for _, s := range propTable {
		if s.prop == prop(fieldID) || s.prop == propStatusID {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(appendJSONString(b, s.name), ':')
		var v any // a string field's nil is null
		switch {
		case s.prop == propTypes:
			v = it.types
		case s.prop == propAddress:
			v = it.address
		case it.vals[s.prop] != nil:
			b = appendJSONString(b, *it.vals[s.prop])
			continue
		}
		text, _ := marshalText(v) // strings, in slices and structs: it cannot fail
		b = append(b, text...)
	}
	return append(b, '}')
}

type genType struct{ Type string }

type genAddress struct {
	Line1    string
	City     string
	Postcode string
	Country  string
}

// resourceGenerator makes the items of one seed, one at a time.
type resourceGenerator struct {
	rng  *rand.Rand
	n    int    // items made so far
	last string // the last person's DisplayName, which a duplicate repeats
}

var (
	genAgencies   = []string{"Hays Technology", "Randstad Professionals", "Brook Street & Co", "Ærø Staffing ApS", "Adecco"}
	genFirstNames = []string{
		"Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Margaret", "Ken", "Frances", "Dennis",
		"Sophie", "James", "Olivia", "Liam", "Amelia", "Noah", "Isla", "Oliver", "Mia", "Jack",
		"Émile", "Zoë", "José", "François", "Søren", "Björn", "Małgorzata", "İlkay", "Øyvind", "Chloé",
		"Siobhán", "Niamh", "Seán", "Aoife", "Mary-Jane", "Jean-Luc", "Anne Marie", "Mohammed", "Priya", "Wei",
		"Yuki", "Hana", "Kofi", "Amara", "Lars", "Ingrid", "Mateo", "Lucía", "Nikolai", "Dmitri",
	}
	genSurnames = []string{
		"Smith", "Jones", "Taylor", "Brown", "Williams", "Wilson", "Johnson", "Davies", "Patel", "Wright",
		"Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Hamilton", "Thompson", "Allen", "Ritchie",
		"O'Brien", "O'Neill", "D'Arcy", "McDonald", "MacLeod", "van der Berg", "de la Cruz", "Müller", "Straße", "Größe",
		"Çelik", "Yılmaz", "Øverland", "Kowalczyk", "Nguyễn", "Zola", "Brontë", "Núñez", "Ångström", "Smith-Jones",
	}
	genCompanyWords = []string{
		"Acme", "Globex", "Initech", "Umbrella", "Stark", "Wayne", "Wonka", "Tyrell", "Cyberdyne", "Soylent",
		"Northwind", "Contoso", "Fabrikam", "Adventure Works", "Tailspin", "Litware", "Proseware", "Lucerne",
		"Müller & Söhne", "Café Olé", "Smith & Wesson", "O'Reilly", "Øresund", "İstanbul Tekstil", "Ærø Fisk",
	}
	genCompanySuffixes = []string{"Ltd", "Limited", "plc", "Inc.", "GmbH", "AG", "S.A.", "LLP", "& Co", "Group", "Holdings", "Services"}
	genPositions       = []string{
		"Engineer", "Senior Engineer", "Manager", "Director", "Analyst", "Consultant", "Administrator",
		"Head of IT", "Service Desk Agent", "Account Manager", "CTO", "Office Manager", "Facilities Coordinator",
	}
	genStreets = []string{"High Street", "Station Road", "Church Lane", "Mill Road", "Königstraße", "Rue de la Paix", "Main Street"}
	genCities  = []string{"London", "Manchester", "Leeds", "Dublin", "München", "Zürich", "København", "Paris", "İzmir", "Oslo"}
	genDomains = []string{"example.com", "example.org", "example.net", "example.co.uk"}
)

// genEdgeEvery: every genEdgeEvery-th item is one of genEdges, in turn,
// so that any few hundred items hold each of them.
const genEdgeEvery = 16

func (g *resourceGenerator) pick(list []string) string { return list[g.rng.IntN(len(list))] }

func (g *resourceGenerator) chance(p float64) bool { return g.rng.Float64() < p }

// optional is a value, "" or null, mostly the value.
func (g *resourceGenerator) optional(value string, pEmpty, pNull float64) *string {
	switch x := g.rng.Float64(); {
	case x < pNull:
		return nil
	case x < pNull+pEmpty:
		return new("")
	}
	return &value
}

// next makes the next item.
func (g *resourceGenerator) next() genItem {
	g.n++
	if g.n%genEdgeEvery == 5 {
		return genEdges[(g.n/genEdgeEvery)%len(genEdges)](g)
	}
	if g.chance(0.2) {
		return g.company()
	}
	first, last := g.pick(genFirstNames), g.pick(genSurnames)
	g.last = first + " " + last
	return g.person(first, last)
}

func (g *resourceGenerator) status() string {
	if g.chance(0.85) {
		return statusActive
	}
	return statusInactive
}

func (g *resourceGenerator) person(first, last string) genItem {
	company := g.pick(genCompanyWords) + " " + g.pick(genCompanySuffixes)
	it := genItem{vals: [numStringFields]*string{
		fieldFirstName: &first, fieldSurname: &last,
		fieldCompany:  g.optional(company, 0.1, 0.15),
		fieldPosition: g.optional(g.pick(genPositions), 0.15, 0.15),
		fieldStatus:   new(g.status()),
	}, types: g.personTypes()}
	// A contractor's agency, picked without a draw from rng so that the
	// items of a seed stay what they were before the property existed.
	if slices.Contains(it.types, genType{"Contractor"}) {
		it.vals[fieldContractorOrganization] = new(genAgencies[g.n%len(genAgencies)])
	}
	// Most clients send DisplayName, as the service asks; some leave it to
	// be generated from the name parts.
	if g.chance(0.8) {
		it.vals[fieldDisplayName] = new(first + " " + last)
	}
	g.contact(&it, first+"."+last)
	return it
}

func (g *resourceGenerator) personTypes() []genType {
	switch x := g.rng.IntN(100); {
	case x < 50:
		return []genType{{"Employee"}}
	case x < 70:
		return []genType{{"Customer"}}
	case x < 82:
		return []genType{{"Contractor"}}
	case x < 88:
		return []genType{{"Employee"}, {"Team"}}
	case x < 93:
		return []genType{{"Customer"}, {"Contractor"}}
	}
	return []genType{}
}

func (g *resourceGenerator) company() genItem {
	name := g.pick(genCompanyWords) + " " + g.pick(genCompanySuffixes)
	types := []genType{{"Company"}}
	if g.chance(0.3) {
		types = append(types, genType{"Customer"})
	}
	it := genItem{vals: [numStringFields]*string{
		fieldCompany:  &name,
		fieldPosition: g.optional("", 0.5, 0.5),
		fieldStatus:   new(g.status()),
	}, types: types}
	if g.chance(0.7) {
		it.vals[fieldDisplayName] = &name
	}
	g.contact(&it, "info")
	return it
}

// contact fills the contact details, with null and "" where directories
// have them.
func (g *resourceGenerator) contact(it *genItem, local string) {
	n := g.n
	it.vals[fieldExternalID] = g.optional(fmt.Sprintf("EXT-%06d", n), 0.15, 0.15)
	it.vals[fieldPhone] = g.optional(fmt.Sprintf("+44 20 7946 %04d", g.rng.IntN(10000)), 0.2, 0.1)
	it.vals[fieldMobile] = g.optional(fmt.Sprintf("07700 %06d", g.rng.IntN(1000000)), 0.3, 0.2)
	it.vals[fieldFax] = g.optional(fmt.Sprintf("+44 20 7946 %04d", g.rng.IntN(10000)), 0.1, 0.75)
	email := genEmailLocal(local) + strconv.Itoa(n) + "@" + g.pick(genDomains)
	it.vals[fieldEmail] = g.optional(email, 0.1, 0.1)
	it.vals[fieldAddressComment] = g.optional("Reception on the "+[]string{"ground", "first", "second"}[g.rng.IntN(3)]+" floor", 0.2, 0.6)
	if g.chance(0.3) {
		it.address = &genAddress{
			Line1:    strconv.Itoa(1+g.rng.IntN(200)) + " " + g.pick(genStreets),
			City:     g.pick(genCities),
			Postcode: fmt.Sprintf("AB%d %dCD", 1+g.rng.IntN(99), g.rng.IntN(10)),
			Country:  []string{"GB", "IE", "DE", "FR", "DK"}[g.rng.IntN(5)],
		}
	}
}

// genEmailFold spells the letters of the name pools in ASCII, as addresses do.
var genEmailFold = strings.NewReplacer(
	"é", "e", "è", "e", "ë", "e", "á", "a", "å", "a", "ä", "a", "à", "a", "ç", "c", "ı", "i", "i̇", "i",
	"í", "i", "ł", "l", "ñ", "n", "ó", "o", "ö", "o", "ø", "o", "ü", "u", "ú", "u", "ß", "ss", "ễ", "e", "ư", "u",
	"æ", "ae", "'", "",
)

// genEmailLocal makes an e-mail local part of a name: lower case ASCII
// letters, with dots between words.
func genEmailLocal(name string) string {
	var b strings.Builder
	for _, r := range genEmailFold.Replace(strings.ToLower(name)) {
		switch {
		case 'a' <= r && r <= 'z' || '0' <= r && r <= '9':
			b.WriteRune(r)
		case r == '.' || r == ' ' || r == '-':
			b.WriteByte('.')
		}
	}
	return strings.Trim(b.String(), ".")
}

// genRunes cuts or repeats s to exactly n characters.
func genRunes(s string, n int) string {
	r := []rune(strings.Repeat(s, n/utf8.RuneCountInString(s)+1))
	return string(r[:n])
}

// genEdges make the items that break clients.
var genEdges = []func(g *resourceGenerator) genItem{
	func(g *resourceGenerator) genItem { // FirstName and Surname at their limits
		it := g.person(genRunes("Maximilián-Éléonore ", maxLength(fieldFirstName)), g.pick(genSurnames))
		it.vals[fieldSurname] = new(genRunes("Ångström-O'Brien ", maxLength(fieldSurname)))
		it.vals[fieldDisplayName] = new("Max Ångström")
		return it
	},
	func(g *resourceGenerator) genItem { // DisplayName at its limit
		it := g.person("Hubert", "Wolfeschlegelsteinhausen")
		it.vals[fieldDisplayName] = new(genRunes("Hubert Blaine Wolfeschlegelsteinhausenbergerdorff Sr. ", maxLength(fieldDisplayName)))
		return it
	},
	func(g *resourceGenerator) genItem { // Company at its limit
		it := g.company()
		it.vals[fieldCompany] = new(genRunes("Société Générale d'Électricité et de Télécommunications 𝔊 ", maxLength(fieldCompany)))
		it.vals[fieldDisplayName] = it.vals[fieldCompany]
		return it
	},
	func(g *resourceGenerator) genItem { // an apostrophe
		it := g.person("Miles", "O'Brien")
		it.vals[fieldDisplayName] = new("Miles O'Brien")
		return it
	},
	func(g *resourceGenerator) genItem { // non-ASCII text
		it := g.person("İlkay", "Straße")
		it.vals[fieldDisplayName] = new("İlkay Straße-Øverland é")
		it.vals[fieldCompany] = new("Ærø Øl & Brød ApS")
		return it
	},
	func(g *resourceGenerator) genItem { // text beyond the BMP
		it := g.person("Zoë", "𝔊öthe")
		it.vals[fieldDisplayName] = new("Zoë 𝔊öthe 🚀")
		it.vals[fieldPosition] = new("Chief 🦄 Officer")
		return it
	},
	func(g *resourceGenerator) genItem { // null beside ""
		it := g.person(g.pick(genFirstNames), g.pick(genSurnames))
		it.vals[fieldPosition], it.vals[fieldExternalID], it.vals[fieldPhone] = new(""), nil, new("")
		it.vals[fieldMobile], it.vals[fieldFax], it.vals[fieldAddressComment] = nil, new(""), nil
		return it
	},
	func(g *resourceGenerator) genItem { // the DisplayName of the last person again
		name := cmp.Or(g.last, "Alex Morgan")
		first, last, _ := strings.Cut(name, " ")
		it := g.person(first, last)
		it.vals[fieldDisplayName] = &name
		return it
	},
	func(g *resourceGenerator) genItem { // a company without people
		it := g.company()
		it.vals[fieldDisplayName] = nil // generated from Company alone
		return it
	},
}

// GenerateSeed writes n generated resources as a seed file (the POST
// /__admin/resources format), one a line: the same seed gives the same
// resources, and a longer run extends a shorter one.
func GenerateSeed(w io.Writer, n int, seed uint64) error {
	// The second PCG word is fixed: the seed alone decides the stream.
	g := &resourceGenerator{rng: rand.New(rand.NewPCG(seed, 0x7265736f75726365))}
	if err := writeSeedFile(w, n, func(int) ([]byte, error) { return g.next().json(), nil }); err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	return nil
}

// generateResources is POST /__admin/generate: {"Count": n, "Seed": s}
// adds n generated resources as a seed of them would, and answers alike.
func (s *Server) generateResources(x *exchange, r *http.Request) (any, error) {
	body, err := readBody(x, r, s.cfg.MaxBody)
	if err != nil {
		return nil, err
	}
	count, seed, err := parseGenerate(body)
	if err != nil {
		return nil, err
	}
	var items bytes.Buffer
	_ = GenerateSeed(&items, count, seed) // into a Buffer: it cannot fail
	return s.insertSeed(x, items.Bytes())
}

// parseGenerate reads {"Count": n, "Seed": s}: an unknown property or a
// value out of range is a 400 that names it.
func parseGenerate(body []byte) (count int, seed uint64, err error) {
	spec, ok := adminObject(body)
	if !ok || spec == nil {
		return 0, 0, errorf(http.StatusBadRequest, "The body must be a JSON object such as %s.", `{"Count": 100, "Seed": 1}`)
	}
	seed = 1
	ms := modelState{}
	props := adminProps(spec, []string{"Count", "Seed"}, "", "A generate request", &ms)
	if raw, ok := props["Count"]; !ok {
		ms.add("Count", fmt.Sprintf("Count is required: how many resources to add, from 1 to %d.", maxGenerateCount))
	} else if json.Unmarshal(raw, &count) != nil || count < 1 || count > maxGenerateCount {
		ms.add("Count", fmt.Sprintf("Count must be an integer from 1 to %d, not %s.", maxGenerateCount, raw))
	}
	if raw, ok := props["Seed"]; ok && json.Unmarshal(raw, &seed) != nil {
		ms.add("Seed", fmt.Sprintf("Seed must be an integer from 0 to %d, not %s.", uint64(1<<64-1), raw))
	}
	if !ms.empty() {
		return 0, 0, invalidAs("The generate request is invalid; nothing was added.", ms)
	}
	return count, seed, nil
}
