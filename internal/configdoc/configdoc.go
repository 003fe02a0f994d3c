// Package configdoc renders the configuration reference (docs/configuration.md)
// from the servers' config structs: every key a server reads, its type, its
// default and the field's doc comment, in the struct's order.
//
// Owns: the rendering. Never: defines a key, a default or a meaning — those
// live on the config structs; the reference follows them, and a test fails
// when the committed file does not.
package configdoc

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
)

// Section is one server's keys.
type Section struct {
	Title string // the heading
	Intro string // a paragraph under it: where the keys are read from
	// Defaults is the server's config struct holding its defaults.
	Defaults any
	// Tag names the struct tag that holds a field's key ("key" or "json").
	Tag string
	// Dirs are the package directories (relative to the module root) whose
	// sources declare the struct and the structs nested in it.
	Dirs []string
}

// Render writes the reference for sections; root is the module root.
// Defaults that depend on the machine are shown as their meaning: a value
// starting with home as ~, and a value equal to a key of machine as that
// key's value (the host name, for example).
func Render(root, home string, machine map[string]string, sections []Section) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# Configuration reference\n\n")
	b.WriteString("Every key each server reads, with its default and meaning, generated from the config structs\n")
	b.WriteString("(`go test ./internal/configdoc -run TestReference -update` rewrites this file; the test fails\n")
	b.WriteString("when it is stale). Keys are Apache's where Apache has them; an unknown key is logged once and\n")
	b.WriteString("ignored, but a broker refuses `transRocksDBEnable=true` and `timerRocksDBEnable=true` (Apache's\n")
	b.WriteString("RocksDB stores, which rocketgo does not read: docs/compatibility.md).\n\n")
	for _, s := range sections {
		fmt.Fprintf(&b, "- [%s](#%s)\n", s.Title, anchor(s.Title))
	}
	for _, s := range sections {
		docs, err := fieldDocs(root, s.Dirs)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n", s.Title, s.Intro)
		b.WriteString("| key | type | default | meaning |\n|---|---|---|---|\n")
		var rows []row
		walk(reflect.ValueOf(s.Defaults), s.Tag, docs, &rows)
		for _, r := range rows {
			def := cell(r.def, true)
			if home != "" && strings.HasPrefix(r.def, home) {
				def = cell("~"+strings.TrimPrefix(r.def, home), true)
			}
			if m, ok := machine[r.def]; ok && r.def != "" {
				def = m
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", r.key, r.typ, def, cell(r.doc, false))
		}
	}
	return b.Bytes(), nil
}

type row struct{ key, typ, def, doc string }

// walk lists v's tagged fields in declaration order, descending into
// untagged nested structs.
func walk(v reflect.Value, tag string, docs map[string]string, out *[]row) {
	v = reflect.Indirect(v)
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		key, _, _ := strings.Cut(sf.Tag.Get(tag), ",")
		if key == "" || key == "-" {
			if sf.Type.Kind() == reflect.Struct {
				walk(v.Field(i), tag, docs, out)
			}
			continue
		}
		*out = append(*out, row{key: key, typ: typeName(sf.Type), def: value(v.Field(i), sf.Type),
			doc: docs[path.Base(t.PkgPath())+"."+t.Name()+"."+sf.Name]})
	}
}

func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "bool"
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "list"
	case reflect.Map:
		return "map"
	}
	return t.Kind().String()
}

// value is a default as text, as fmt prints it; a Secret prints nothing.
func value(f reflect.Value, t reflect.Type) string {
	if t.Name() == "Secret" {
		return "" // credentials: never printed
	}
	switch f.Kind() {
	case reflect.Slice, reflect.Map:
		if f.Len() == 0 {
			return ""
		}
	}
	return fmt.Sprint(f.Interface())
}

// cell makes text fit a table cell: one line, pipes escaped; code-quoted
// when asked and not empty.
func cell(s string, code bool) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.ReplaceAll(s, "|", `\|`)
	if !code {
		return s
	}
	if s == "" {
		return "—"
	}
	return "`" + s + "`"
}

func anchor(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// fieldDocs reads the struct fields' comments in dirs: "pkg.Type.Field" →
// text.
// A field without a comment of its own takes the comment of the group it
// opens or continues (a comment followed by several fields with no blank
// line between them describes them all).
func fieldDocs(root string, dirs []string) (map[string]string, error) {
	docs := map[string]string{}
	fset := token.NewFileSet()
	for _, dir := range dirs {
		entries, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			return nil, err
		}
		var names []string
		for _, e := range entries {
			if n := e.Name(); strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			f, err := parser.ParseFile(fset, filepath.Join(root, dir, n), nil, parser.ParseComments)
			if err != nil {
				return nil, err
			}
			ast.Inspect(f, func(node ast.Node) bool {
				ts, ok := node.(*ast.TypeSpec)
				if !ok {
					return true
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					return true
				}
				structDocs(fset, f.Name.Name+"."+ts.Name.Name, st, docs)
				return false
			})
		}
	}
	return docs, nil
}

// sameGroup stands for the comment of the key above, which describes a
// group of keys together.
const sameGroup = "(with the key above)"

func structDocs(fset *token.FileSet, typ string, st *ast.StructType, docs map[string]string) {
	group, lastLine := "", -1
	for _, f := range st.Fields.List {
		line := fset.Position(f.Pos()).Line
		text := ""
		if f.Doc != nil {
			text = f.Doc.Text()
			group = text
		} else if line == lastLine+1 && group != "" {
			text = sameGroup
		} else {
			group = ""
		}
		if f.Comment != nil {
			text = strings.TrimSpace(text + " " + f.Comment.Text())
		}
		lastLine = fset.Position(f.End()).Line
		for _, name := range f.Names {
			docs[typ+"."+name.Name] = strings.TrimSpace(text)
		}
	}
}
