package auth

import (
	"net/netip"
	"testing"

	"github.com/rs/zerolog"
)

func zlog() zerolog.Logger { return zerolog.Nop() }

// FuzzParseAcls: any acls.json either fails to parse or parses to ACLs
// whose written form parses to the same written form.
func FuzzParseAcls(f *testing.F) {
	f.Add([]byte(`[{"subject":"User:a","policies":[{"policyType":"Custom","entries":[{"resource":"Topic:t*","actions":["Pub","Sub"],"sourceIps":["10.0.0.0/8"],"decision":"Allow"}]}]}]`))
	f.Add([]byte(`[{"subject":"user:b","policies":[{"entries":[{"resource":"*","actions":["All"],"decision":"deny"}]}]}]`))
	f.Add([]byte(`[{"username":"u","password":"p","userType":"Super"}]`))
	// A name with a byte that is not UTF-8: read as U+FFFD, as Apache's
	// (Java's) decoding reads it, so the written form reads back the same.
	f.Add([]byte("[{\"subject\":\"User:\",\"policies\":[{\"policyType\":\"Custom\",\"entries\":[{\"resource\":\"Topic:\xff\",\"actions\":[\"Sub\"],\"decision\":\"Allow\"}]}]}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = ParseUsers(data)
		acls, err := ParseAcls(data)
		if err != nil {
			return
		}
		m := map[string]*Acl{}
		for _, a := range acls {
			m[a.Username] = a
		}
		out, err := json.Marshal(aclsJSON(m))
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseAcls(out)
		if err != nil {
			t.Fatalf("written form does not parse: %v\n%s", err, out)
		}
		m2 := map[string]*Acl{}
		for _, a := range again {
			m2[a.Username] = a
		}
		out2, _ := json.Marshal(aclsJSON(m2))
		if string(out) != string(out2) {
			t.Fatalf("not stable:\n%s\n%s", out, out2)
		}
		// The matcher decides for any parsed ACL without panicking, and
		// its choice is one of the entries that match.
		for _, a := range acls {
			for _, r := range []Request{{Resource: OfTopic("t1"), Actions: actPub}, {Resource: OfGroup("g"), Actions: actSubGet}} {
				ip := netip.MustParseAddr("10.1.2.3")
				if e := a.decide(r, ip, javaHost(ip), nil); e != nil && !e.Resource.Match(r.Resource) {
					t.Fatalf("decided by a non-matching entry %s for %s", e.Resource.Key(), r.Resource.Key())
				}
			}
		}
	})
}

// FuzzSortJava: Java's sort of policy entries is a permutation of them,
// whatever the (inconsistent) comparator answers.
func FuzzSortJava(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64 {
			data = data[:64]
		}
		var es []*Entry
		for i := 0; i+1 < len(data); i += 2 {
			es = append(es, &Entry{
				Resource: Resource{Type: ResourceType(data[i] % 6), Pattern: Pattern(1 + data[i]/6%3), Name: string(rune('a' + data[i+1]%4))},
				Decision: Decision(1 + data[i+1]/4%2),
			})
		}
		sorted := append([]*Entry(nil), es...)
		sortJava(sorted, compareEntries)
		seen := map[*Entry]int{}
		for _, e := range es {
			seen[e]++
		}
		for _, e := range sorted {
			seen[e]--
		}
		for _, n := range seen {
			if n != 0 {
				t.Fatalf("not a permutation")
			}
		}
	})
}
