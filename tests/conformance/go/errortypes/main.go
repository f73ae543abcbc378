// Command errortypes lists the exported error types of the pinned Go SDKs, as drift
// entries (tests/conformance/drift/golang.py checks them against the rules).
//
//	go run ./errortypes      (from tests/conformance/go)
//
// The packages are those the conformance worker links (`go list -deps .`) that belong to
// an SDK module; their non-test sources are parsed (go/parser, from the module cache) for
// every exported type with an `Error() string` method. A type is written as %T prints the
// error an SDK returns: `*pkg.T` for a pointer receiver, `pkg.T` for a value receiver. A
// type that also has `ErrorCode() string` returning a constant (aws-sdk-go-v2's service
// errors, smithy.APIError) is a code entry instead: Describe sends that code, and the
// provider-code rules decide it whatever the type.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// sdkModules are the pinned SDKs the drift check covers (tests/conformance/go/go.mod).
var sdkModules = []string{
	"github.com/openai/openai-go/v3",
	"github.com/anthropics/anthropic-sdk-go",
	"github.com/aws/aws-sdk-go-v2",
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime",
	"github.com/aws/smithy-go",
	"google.golang.org/genai",
	"github.com/tmc/langchaingo",
	"github.com/sony/gobreaker/v2",
}

type listed struct {
	ImportPath string
	Name       string
	Dir        string
	GoFiles    []string
	Module     *struct{ Path string }
}

type entry struct {
	SDK        string   `json:"sdk"`
	Language   string   `json:"language"`
	Type       string   `json:"type"`
	Supertypes []string `json:"supertypes"`
	Code       string   `json:"code,omitempty"`
}

func main() {
	out, err := exec.Command("go", "list", "-deps", "-json", ".").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "go list:", err)
		os.Exit(1)
	}
	sdk := map[string]bool{}
	for _, m := range sdkModules {
		sdk[m] = true
	}
	var entries []entry
	decoder := json.NewDecoder(bytes.NewReader(out))
	for decoder.More() {
		var p listed
		if err := decoder.Decode(&p); err != nil {
			fmt.Fprintln(os.Stderr, "go list output:", err)
			os.Exit(1)
		}
		if p.Module == nil || !sdk[p.Module.Path] {
			continue
		}
		entries = append(entries, scan(p)...)
	}
	sort.Slice(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		return a.SDK+a.Type+a.Code < b.SDK+b.Type+b.Code
	})
	data, _ := json.MarshalIndent(entries, "", " ")
	fmt.Println(string(data))
}

// scan finds the package's exported types with an Error() string method.
func scan(p listed) []entry {
	fset := token.NewFileSet()
	errorRecv := map[string]bool{} // type name -> pointer receiver
	codes := map[string]string{}
	for _, name := range p.GoFiles {
		file, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
		if err != nil {
			continue
		}
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 {
				continue
			}
			typeName, pointer := receiver(fn.Recv.List[0].Type)
			if typeName == "" || !ast.IsExported(typeName) {
				continue
			}
			switch {
			case fn.Name.Name == "Error" && returnsString(fn):
				errorRecv[typeName] = pointer
			case fn.Name.Name == "ErrorCode" && returnsString(fn):
				if code := constantReturn(fn); code != "" {
					codes[typeName] = code
				}
			}
		}
	}
	var out []entry
	for typeName, pointer := range errorRecv {
		printed := p.Name + "." + typeName
		if pointer {
			printed = "*" + printed
		}
		e := entry{SDK: p.Module.Path, Language: "go", Type: printed, Supertypes: []string{}}
		if code, ok := codes[typeName]; ok {
			e.Code = code // decided by the code it sends, as the AWS service errors are
		}
		out = append(out, e)
	}
	return out
}

func receiver(expr ast.Expr) (string, bool) {
	pointer := false
	if star, ok := expr.(*ast.StarExpr); ok {
		pointer, expr = true, star.X
	}
	if index, ok := expr.(*ast.IndexExpr); ok { // a generic type's receiver
		expr = index.X
	}
	if id, ok := expr.(*ast.Ident); ok {
		return id.Name, pointer
	}
	return "", false
}

func returnsString(fn *ast.FuncDecl) bool {
	results := fn.Type.Results
	if results == nil || len(results.List) != 1 || (fn.Type.Params != nil && len(fn.Type.Params.List) > 0) {
		return false
	}
	id, ok := results.List[0].Type.(*ast.Ident)
	return ok && id.Name == "string"
}

// constantReturn is the string literal an ErrorCode method returns when nothing
// overrides it (aws-sdk-go-v2: `if e.ErrorCodeOverride == nil { return "Name" }`).
func constantReturn(fn *ast.FuncDecl) string {
	found := ""
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if ret, ok := n.(*ast.ReturnStmt); ok && found == "" && len(ret.Results) == 1 {
			if lit, ok := ret.Results[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				found, _ = strconv.Unquote(lit.Value)
			}
		}
		return found == ""
	})
	return strings.TrimSpace(found)
}
