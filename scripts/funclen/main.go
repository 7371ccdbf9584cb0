// Command funclen lists the functions of the Go files below the given
// directories (tests aside) that are longer than -over lines, longest first,
// and counts them: the shape check docs/development.md describes.
//
//	go run ./scripts/funclen -over 80 ./internal ./cmd
package main

import (
	"cmp"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

type fn struct {
	pos   string
	name  string
	lines int
}

func main() {
	over := flag.Int("over", 80, "list functions longer than this many lines")
	flag.Parse()
	var long []fn
	fset := token.NewFileSet()
	for _, root := range flag.Args() {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
				if n := end.Line - start.Line + 1; n > *over {
					long = append(long, fn{fmt.Sprintf("%s:%d", path, start.Line), name(fd), n})
				}
			}
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "funclen:", err)
			os.Exit(2)
		}
	}
	slices.SortFunc(long, func(a, b fn) int { return cmp.Compare(b.lines, a.lines) })
	for _, f := range long {
		fmt.Printf("%4d %s %s\n", f.lines, f.name, f.pos)
	}
	fmt.Printf("%d functions over %d lines\n", len(long), *over)
}

func name(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return "(" + id.Name + ")." + fd.Name.Name
	}
	return fd.Name.Name
}
