package resourcedir

// The realistic data the benchmarks and the larger tests run on:
// generated resources, whole directories of them, and seed bodies.

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// benchSeed fixes every generated value and every generated GUID.
const benchSeed uint64 = 0x5eed_2024

var benchFirstNames = []string{
	"Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Émile", "Katherine", "Linus", "Margaret",
	"Niklaus", "Radia", "Søren", "Tim", "Yukihiro", "Zoë", "James", "Mary", "John", "Patricia",
	"Robert", "Jennifer", "Michael", "Linda", "William", "Elizabeth", "David", "Susan", "Richard", "Jessica",
	"Joseph", "Sarah", "Thomas", "Karen", "Charles", "Nancy", "Christopher", "Lisa", "Daniel", "Betty",
	"Matthew", "Sandra", "Anthony", "Ashley", "Mark", "Kimberly", "Paul", "Emily", "Steven", "Donna",
	"Andrew", "Michelle", "Joshua", "Carol", "Kenneth", "Amanda", "Kevin", "Melissa", "Brian", "Deborah",
	"George", "Stephanie", "Timothy", "Rebecca", "Ronald", "Sharon", "Jason", "Laura", "Jeffrey", "Cynthia",
	"Ryan", "Dorothy", "Jacob", "Amy", "Gary", "Kathleen", "Nicholas", "Angela", "Eric", "Shirley",
	"José", "María", "François", "Björn", "Jürgen", "Zoltán", "Łukasz", "Siobhán", "Hiroshi", "Mei",
	"Priya", "Arjun", "Olumide", "Chiara", "Anneke", "Sven", "Ingrid", "Dmitri", "Ana", "Noah",
	"Oliver", "Amelia", "Harry", "Isla", "Jack", "Ava", "Leo", "Mia", "Oscar", "Ivy",
	"Freya", "Arthur", "Lily", "Theo", "Rosie", "Finn", "Anna", "Hannah", "Joanne", "Dianne",
}

var benchSurnames = []string{
	"Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Zola", "Johnson", "Torvalds", "Hamilton",
	"Wirth", "Perlman", "Kierkegaard", "Berners-Lee", "Matsumoto", "O'Brien", "Smith", "Jones", "Williams", "Brown",
	"Taylor", "Davies", "Evans", "Thomas", "Roberts", "Walker", "Wright", "Robinson", "Thompson", "White",
	"Hughes", "Edwards", "Green", "Hall", "Wood", "Harris", "Lewis", "Martin", "Jackson", "Clarke",
	"Clark", "Turner", "Hill", "Scott", "Cooper", "Morris", "Ward", "Moore", "King", "Watson",
	"Baker", "Harrison", "Morgan", "Patel", "Young", "Allen", "Mitchell", "James", "Anderson", "Phillips",
	"Lee", "Bell", "Parker", "Davis", "Miller", "Wilson", "Garcia", "Rodriguez", "Martinez", "Hernández",
	"López", "González", "Pérez", "Sánchez", "Müller", "Schmidt", "Schneider", "Fischer", "Weber", "Meyer",
	"Wagner", "Becker", "Schulz", "Hoffmann", "Dubois", "Lefèvre", "Moreau", "Laurent", "Rossi", "Russo",
	"Ferrari", "Esposito", "Bianchi", "Romano", "Nowak", "Kowalski", "Wiśniewski", "Novák", "Svoboda", "Horváth",
	"Nagy", "Kovács", "Jansen", "de Vries", "van Dijk", "Bakker", "Visser", "Smit", "Andersson", "Johansson",
	"Karlsson", "Nilsson", "Hansen", "Nielsen", "Jensen", "Virtanen", "Korhonen", "Murphy", "Kelly", "O'Sullivan",
	"Walsh", "McCarthy", "Byrne", "Ryan", "O'Connor", "Tanaka", "Suzuki", "Takahashi", "Watanabe", "Itō",
	"Kim", "Park", "Choi", "Chen", "Wang", "Li", "Zhang", "Liu", "Singh", "Kumar",
	"Sharma", "Gupta", "Okafor", "Adeyemi", "Mensah", "Silva", "Santos", "Oliveira", "Souza", "Costa",
}

// Companies are prefix × suffix: 40 × 25 = 1000 distinct names.
var benchCompanyPrefixes = []string{
	"Analytical", "Acme", "Globex", "Initech", "Umbrella", "Stark", "Wayne", "Hooli", "Northwind", "Contoso",
	"Fabrikam", "Tailspin", "Wingtip", "Adventure", "Litware", "Proseware", "Lucerne", "Margie's", "Fourth Coffee", "Blue Yonder",
	"Alpine", "Coho", "Wide World", "Humongous", "Trey", "Graphic", "Southridge", "Woodgrove", "Datum", "Consolidated",
	"Tyrell", "Cyberdyne", "Soylent", "Vandelay", "Gringotts", "Monarch", "Oceanic", "Massive", "Wonka", "Zenith",
}

var benchCompanySuffixes = []string{
	"Engines", "Ltd", "Corporation", "Industries", "plc", "Enterprises", "Traders", "Systems", "Logistics", "Partners",
	"Holdings", "Labs", "Consulting", "Group", "Foods", "Pharma", "Energy", "Software", "Bank", "Insurance",
	"Airlines", "Media", "Retail", "Construction", "GmbH",
}

var benchPositions = []string{
	"Engineer", "Senior Engineer", "Manager", "Director", "Analyst", "Consultant", "Intern", "Accountant",
	"Sales Representative", "Account Manager", "Support Specialist", "Designer", "Architect", "Team Lead",
	"HR Partner", "Recruiter", "Office Manager", "Chief Executive Officer", "Data Scientist", "Technician",
}

var benchStreets = []string{"High Street", "Station Road", "Main Street", "Park Road", "Church Lane", "Victoria Road", "Green Lane", "Mill Lane"}

var benchCities = []string{"London", "Manchester", "Leeds", "Bristol", "Dublin", "Berlin", "Paris", "Madrid", "Amsterdam", "Stockholm"}

// benchRand is splitmix64: resource i's values come from its own stream, so
// any resource can be generated alone, in any order, in parallel.
type benchRand struct{ s uint64 }

func newBenchRand(i int) benchRand { return benchRand{s: benchSeed ^ (uint64(i)+1)*0x9e3779b97f4a7c15} }

func (r *benchRand) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (r *benchRand) intN(n int) int { return int(r.next() % uint64(n)) }

// pct is true with probability p percent.
func (r *benchRand) pct(p int) bool { return r.intN(100) < p }

func benchCompany(k int) string {
	return benchCompanyPrefixes[k%len(benchCompanyPrefixes)] + " " + benchCompanySuffixes[k/len(benchCompanyPrefixes)]
}

// benchNumCompanies is the number of distinct companies.
var benchNumCompanies = len(benchCompanyPrefixes) * len(benchCompanySuffixes)

// benchEmailPart lower-cases a name and keeps letters only, so that
// "O'Brien" gives "obrien" (non-ASCII letters are kept, as some
// directories do).
func benchEmailPart(s string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		if c == ' ' || c == '\'' || c == '-' {
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// benchJSON returns the create (or seed) body of resource i: a person at a
// company (5% are companies alone), Email and ExternalID unique, Status
// Active 90%, 0–2 types, DisplayName mostly generated by the service.
func benchJSON(i int) []byte {
	return benchAppendJSON(make([]byte, 0, 512), i)
}

func benchAppendJSON(b []byte, i int) []byte {
	r := newBenchRand(i)
	companyK := r.intN(benchNumCompanies)
	company := benchCompany(companyK)
	domain := benchEmailPart(company) + ".example"
	companyOnly := r.pct(5)
	first := benchFirstNames[r.intN(len(benchFirstNames))]
	sur := benchSurnames[r.intN(len(benchSurnames))]

	props := 0
	prop := func(name string) {
		if props > 0 {
			b = append(b, ',')
		}
		props++
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, '"', ':')
	}
	str := func(name, v string) {
		prop(name)
		b = appendJSONString(b, v)
	}
	null := func(name string) {
		prop(name)
		b = append(b, "null"...)
	}

	b = append(b, '{')
	if companyOnly {
		null("FirstName")
		null("Surname")
		str("Email", "info."+strconv.Itoa(i)+"@"+domain)
	} else {
		str("FirstName", first)
		str("Surname", sur)
		str("Email", benchEmailPart(first)+"."+benchEmailPart(sur)+"."+strconv.Itoa(i)+"@"+domain)
		if r.pct(15) {
			str("DisplayName", sur+", "+first)
		}
	}
	str("Company", company)
	if !companyOnly && r.pct(85) {
		str("Position", benchPositions[r.intN(len(benchPositions))])
	}
	switch {
	case r.pct(10):
		str("Status", statusInactive)
	case r.pct(2):
		str("Status", "active") // canonicalised by the service
	case r.pct(50):
		str("Status", statusActive)
	} // otherwise omitted: Active
	str("ExternalID", fmt.Sprintf("EMP-%08d", i))
	str("Phone", fmt.Sprintf("+44 20 7%03d %04d", r.intN(1000), r.intN(10000)))
	if !companyOnly && r.pct(60) {
		str("Mobile", fmt.Sprintf("+44 7700 9%05d", r.intN(100000)))
	}
	if r.pct(5) {
		str("Fax", fmt.Sprintf("+44 20 7%03d %04d", r.intN(1000), r.intN(10000)))
	}
	if r.pct(10) {
		str("AddressComment", "Reception on floor "+strconv.Itoa(1+r.intN(12)))
	}
	prop("Types")
	b = append(b, '[')
	if companyOnly {
		b = append(b, `{"Type":"Company"}`...)
	} else {
		n := r.intN(3)
		t0 := r.intN(4) // Team, Customer, Contractor, Employee
		for k := range n {
			if k > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"Type":"`...)
			b = append(b, requestorTypeTable[(t0+k)%4].name...)
			b = append(b, `"}`...)
		}
	}
	b = append(b, ']')
	if r.pct(30) {
		prop("Address")
		b = fmt.Appendf(b, `{"Street":"%d %s","City":"%s","PostCode":"%c%d %d%c%c","Country":"GB"}`,
			1+r.intN(300), benchStreets[r.intN(len(benchStreets))], benchCities[r.intN(len(benchCities))],
			'A'+r.intN(26), 1+r.intN(20), r.intN(10), 'A'+r.intN(26), 'A'+r.intN(26))
	}
	return append(b, '}')
}

// benchBuild turns a create body into a resource by the create rules, as
// POST /api/v2/resource does (without the Id, which the store gives).
func benchBuild(body []byte) *resource {
	r, err := buildBody(body, modeCreate, "")
	if err != nil {
		panic(fmt.Sprintf("bench generator: %v in %s", err, body))
	}
	return r
}

// benchResources returns resources from..to-1, built on every CPU.
func benchResources(from, to int) []*resource {
	out := make([]*resource, to-from)
	workers := min(runtime.GOMAXPROCS(0), max(1, len(out)/1000))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 0, 1024)
			for k := w; k < len(out); k += workers {
				buf = benchAppendJSON(buf[:0], from+k)
				out[k] = benchBuild(buf)
			}
		}()
	}
	wg.Wait()
	return out
}

// benchDir is a store of n generated resources with one resource picked as
// the target of lookups. Benchmarks must leave its contents as they found
// them (update restores what it changes).
type benchDir struct {
	n      int
	store  *store
	target *resource // the resource in the middle of the directory
	built  time.Duration

	// createStore is a copy that create benchmarks may grow.
	createOnce  sync.Once
	createStore *store
}

var benchDirs = struct {
	sync.Mutex
	m map[int]*benchDirEntry
}{m: map[int]*benchDirEntry{}}

type benchDirEntry struct {
	once sync.Once
	dir  *benchDir
}

// benchDirectory returns the shared directory of n resources, building it
// on first use.
func benchDirectory(b *testing.B, n int) *benchDir {
	benchDirs.Lock()
	e := benchDirs.m[n]
	if e == nil {
		e = &benchDirEntry{}
		benchDirs.m[n] = e
	}
	benchDirs.Unlock()
	e.once.Do(func() {
		// As a -seed file is: frozen into a base, the store a layer on it.
		start := time.Now()
		seed := benchSeed
		frozen, err := newBase(benchResources(0, n))
		if err != nil {
			panic(err)
		}
		s := newLayer(frozen, &seed)
		rows, _ := s.all()
		e.dir = &benchDir{n: n, store: s, target: rows[n/2], built: time.Since(start)}
		b.Logf("built a directory of %d resources in %v", n, e.dir.built.Round(time.Millisecond))
	})
	return e.dir
}

// benchCopy returns a store holding rows whose new GUIDs come from
// crypto/rand, as `go run .` does. (A copy seeded like the original would
// restart the same GUID stream, and its first create would skip every taken
// Id: O(n) once.)
func benchCopy(rows []*resource) *store {
	s := newStore(nil)
	if err := storeLoad(s, rows); err != nil {
		panic(err)
	}
	return s
}

// benchQuote writes s as a filter string value.
func benchQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

const benchPageSize = 25

// benchSeedBatches caches the request bodies of BenchmarkSeedHTTP.
var benchSeedBatches sync.Map // int -> [][]byte

func benchSeedBodies(n, batch int) [][]byte {
	if v, ok := benchSeedBatches.Load(n); ok {
		return v.([][]byte)
	}
	var bodies [][]byte
	for from := 0; from < n; from += batch {
		body := make([]byte, 0, 512*batch)
		body = append(body, '[')
		for i := from; i < min(from+batch, n); i++ {
			if i > from {
				body = append(body, ',')
			}
			body = benchAppendJSON(body, i)
		}
		bodies = append(bodies, append(body, ']'))
	}
	benchSeedBatches.Store(n, bodies)
	return bodies
}
