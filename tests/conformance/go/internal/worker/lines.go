package worker

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
)

// Serve answers each non-empty stdin line with handle's answer as one JSON line on stdout,
// flushed at once (the Python side waits for it), until stdin ends.
func Serve[A any](handle func(line string) A) {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		line := strings.TrimSpace(in.Text())
		if line == "" {
			continue
		}
		data, _ := json.Marshal(handle(line))
		out.Write(append(data, '\n'))
		out.Flush()
	}
}
