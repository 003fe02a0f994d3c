package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rocketgo/rocketgo/internal/adminclient"
)

// dumpCompactionLog prints each message of a file in the commit log's
// layout (a compaction topic's log; any commit log file), without bodies,
// until the first record that is not one (a zero or out-of-range size, an
// undecodable record), as Apache's tool does reading the file mapped.
func dumpCompactionLog(a *admin, o *options, args []string) error {
	file := o.String("f", "file", "to dump file name")
	if err := a.parse(o, args); err != nil {
		return err
	}
	if !o.Given("f") {
		fmt.Fprint(a.out, "miss dump log file name\n")
		return nil
	}
	f, err := os.Open(*file)
	if err != nil {
		return fmt.Errorf("file %s not exist: %w", *file, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.IsDir() {
		return fmt.Errorf("file %s is a directory", *file)
	}
	size := st.Size()
	var head [4]byte
	for off := int64(0); off < size; {
		if _, err := f.ReadAt(head[:], off); err != nil {
			if errors.Is(err, io.EOF) {
				return nil // a size cut short: Apache's decode fails there too
			}
			return err
		}
		n := int64(int32(binary.BigEndian.Uint32(head[:])))
		if n <= 0 || n > size-off || n > maxToolRecord {
			return nil
		}
		rec := make([]byte, n)
		if _, err := f.ReadAt(rec, off); err != nil {
			return err
		}
		m, _, err := adminclient.DecodeMessage(rec)
		if err != nil {
			return nil // MessageDecoder.decode answers null: the end
		}
		off += n
		javaPrintf(a, messageExtText(m, "null", "null")+"\n")
	}
	return nil
}

// maxToolRecord bounds one record read (a commit log's messages are at most
// maxMessageSize plus their header).
const maxToolRecord = 64 << 20

// javaPrintf is System.out.printf(s) of a text taken as the format, as
// Apache's dump does: "%n" and "%%" are printed as a line break and a
// percent sign, any other "%" makes Java throw, and the text is not
// printed (the trace goes to stderr).
func javaPrintf(a *admin, s string) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && (s[i+1] == 'n' || s[i+1] == '%') {
			if s[i+1] == 'n' {
				b.WriteByte('\n')
			} else {
				b.WriteByte('%')
			}
			i++
			continue
		}
		fmt.Fprintf(a.errOut, "java.util.UnknownFormatConversionException at %q\n", s[i:min(len(s), i+2)])
		return
	}
	fmt.Fprint(a.out, b.String())
}
