package resourcedir

// Tests of rules.go: create validation, rule by rule.

import (
	"net/http"
	"strconv"
	"testing"
)

// apiWrongTypes are JSON values that are not strings (and not null).
var apiWrongTypes = []string{`1`, `-1.5e3`, `true`, `false`, `{}`, `{"a":"b"}`, `[]`, `["x"]`}

func TestCreateValidation(t *testing.T) {
	t.Parallel()
	type vcase struct {
		name string
		body string
		msg  string
		ms   map[string]string
	}
	cases := []vcase{
		{"unknown requestor type", `{"Company":"C","Types":[{"Type":"Manager"}]}`, "The request is invalid.",
			map[string]string{"Types[0].Type": `Unknown requestor type "Manager"; it must be one of Team, Customer, Contractor, Employee, Company.`}},
		{"requestor type by Id only", `{"Company":"C","Types":[{"Id":16}]}`, "invalid",
			map[string]string{"Types[0].Type": "Type is required"}},
		{"null Type", `{"Company":"C","Types":[{"Type":null,"Id":2}]}`, "invalid",
			map[string]string{"Types[0].Type": "Type is required"}},
		{"Type not a string", `{"Company":"C","Types":[{"Type":16}]}`, "invalid",
			map[string]string{"Types[0].Type": "Type must be a string"}},
		{"empty Type", `{"Company":"C","Types":[{"Type":""}]}`, "invalid",
			map[string]string{"Types[0].Type": `Unknown requestor type ""`}},
		{"Types entry not an object", `{"Company":"C","Types":["Employee"]}`, "invalid",
			map[string]string{"Types[0].Type": "must be an object"}},
		{"every bad entry is named", `{"Company":"C","Types":[{"Type":"Team"},{"Type":"Nope"},{"Type":"Team"},null]}`, "invalid",
			map[string]string{"Types[1].Type": `"Nope"`, "Types[3].Type": "must be an object"}},
		{"unknown Status", `{"Company":"C","Status":"Enabled"}`, "invalid",
			map[string]string{"Status": `Status must be 'Active' or 'Inactive', not "Enabled".`}},
		{"empty Status", `{"Company":"C","Status":""}`, "invalid", map[string]string{"Status": "'Active' or 'Inactive'"}},
		{"padded Status", `{"Company":"C","Status":" Active"}`, "invalid", map[string]string{"Status": "'Active' or 'Inactive'"}},
		{"no name at all", `{}`, "invalid",
			map[string]string{"Company": "Company is required when FirstName and Surname are both empty."}},
		{"only white space names", `{"FirstName":" ","Surname":"\t\n","Company":"   "}`, "invalid",
			map[string]string{"Company": "Company is required"}},
		{"DisplayName does not replace the Company rule", `{"DisplayName":"D","FirstName":null,"Surname":""}`, "invalid",
			map[string]string{"Company": "Company is required"}},
		{"FirstName one over", `{"FirstName":"` + apiRep("é", 51) + `"}`, "invalid",
			map[string]string{"FirstName": "FirstName is 51 characters long; the limit is 50."}},
		{"Surname one over", `{"Surname":"` + apiRep("ж", 51) + `"}`, "invalid",
			map[string]string{"Surname": "Surname is 51 characters long; the limit is 50."}},
		{"Company one over", `{"Company":"` + apiRep("語", 101) + `","DisplayName":"D"}`, "invalid",
			map[string]string{"Company": "Company is 101 characters long; the limit is 100."}},
		{"DisplayName one over", `{"Company":"C","DisplayName":"` + apiRep("ß", 101) + `"}`, "invalid",
			map[string]string{"DisplayName": "DisplayName is 101 characters long; the limit is 100."}},
		{"DisplayName one over outside the BMP", `{"Company":"C","DisplayName":"` + apiRep("😀", 101) + `"}`, "invalid",
			map[string]string{"DisplayName": "DisplayName is 101 characters long"}},
		{"generated DisplayName one over", `{"FirstName":"` + apiRep("é", 50) + `","Surname":"` + apiRep("ж", 50) + `"}`, "invalid",
			map[string]string{"DisplayName": "DisplayName was not sent, and the one generated from FirstName, Surname and Company is 101 characters long; the limit is 100. Send a DisplayName of at most 100 characters."}},
		{"generated DisplayName far over", `{"FirstName":"` + apiRep("é", 50) + `","Surname":"` + apiRep("ж", 50) + `","Company":"` + apiRep("x", 100) + `"}`,
			"invalid", map[string]string{"DisplayName": "generated"}},
		{"every violation at once",
			`{"FirstName":"` + apiRep("é", 51) + `","Surname":"` + apiRep("ж", 51) + `","Company":"` + apiRep("語", 101) + `","Status":"x",
			"Types":[{"Type":"x"}],"Phone":1,"Address":"x","Fax":{}}`, "The request is invalid.",
			map[string]string{"FirstName": "51 characters", "Surname": "51 characters", "Company": "101 characters",
				"DisplayName": "generated", "Status": `not "x"`, "Types[0].Type": `"x"`, "Phone": "Phone must be a string or null.",
				"Address": "Address must be a JSON object or null.", "Fax": "Fax must be a string or null."}},
		{"a wrong type under a lower-case name is reported under the canonical one", `{"Company":"C","firstname":1}`, "invalid",
			map[string]string{"FirstName": "FirstName must be a string or null."}},
	}
	// Every property of the wrong JSON type is named.
	for _, prop := range []string{"Id", "DisplayName", "FirstName", "Surname", "Company", "Position", "Status", "ExternalID",
		"Phone", "Mobile", "Fax", "Email", "AddressComment"} {
		for _, v := range apiWrongTypes {
			cases = append(cases, vcase{prop + " " + v, `{"FirstName":"F",` + strconv.Quote(prop) + `:` + v + `}`, "The request is invalid.",
				map[string]string{prop: prop + " must be a string or null."}})
		}
	}
	for _, v := range []string{`1`, `true`, `"Employee"`, `{}`, `{"Type":"Team"}`} {
		cases = append(cases, vcase{"Types " + v, `{"Company":"C","Types":` + v + `}`, "The request is invalid.",
			map[string]string{"Types": `Types must be an array of objects such as {"Type": "Employee"}, or null.`}})
	}
	for _, v := range []string{`1`, `true`, `"1 Main St"`, `[]`, `[{"Street":"x"}]`} {
		cases = append(cases, vcase{"Address " + v, `{"Company":"C","Address":` + v + `}`, "The request is invalid.",
			map[string]string{"Address": "Address must be a JSON object or null."}})
	}
	a := startServer(t, DefaultConfig(), nil).checkingEvery()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a.on(t).do(http.MethodPost, "/api/v2/resource", c.body).wantError(t, http.StatusBadRequest, c.msg, c.ms)
		})
	}
	if n := a.store.count(); n != 0 {
		t.Errorf("%d invalid resources were stored", n)
	}
}
