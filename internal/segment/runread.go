package segment

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"handoff/internal/domain"
)

// isRun reports whether path starts with a run's magic; anything else is
// taken for Parquet (staging chunks written before runs existed are).
func isRun(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var head [len(runMagic)]byte
	if _, err := io.ReadFull(f, head[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return false, nil // too short for either: Parquet's reader says why
		}
		return false, err
	}
	return string(head[:]) == runMagic, nil
}

// maxRunSchemaBytes bounds a run's schema header.
const maxRunSchemaBytes = 16 << 20

// openRun opens a run file and reads its schema; see open for into.
func openRun(path string, into *domain.Schema) (_ *Reader, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
		}
	}()
	br := bufio.NewReaderSize(f, 64<<10)
	schema, err := readRunSchema(br)
	if err != nil {
		return nil, err
	}
	r := &Reader{path: path, f: f, schema: schema}
	if r.dimPos, r.absent, err = mapDims(schema, into); err != nil {
		return nil, err
	}
	r.outDims = len(r.dimPos) + len(r.absent)
	for _, c := range schema.Columns() {
		r.types = append(r.types, c.Type)
	}
	r.run = &runDecoder{r: br, src: br, types: r.types, nd: len(schema.Dims)}
	return r, nil
}

func readRunSchema(br *bufio.Reader) (domain.Schema, error) {
	var head [len(runMagic)]byte
	if _, err := io.ReadFull(br, head[:]); err != nil || string(head[:]) != runMagic {
		return domain.Schema{}, errors.New("not a run file")
	}
	n, err := binary.ReadUvarint(br)
	if err != nil || n > maxRunSchemaBytes {
		return domain.Schema{}, fmt.Errorf("run schema: bad length (%v)", err)
	}
	meta := make([]byte, n)
	if _, err := io.ReadFull(br, meta); err != nil {
		return domain.Schema{}, fmt.Errorf("run schema: %w", noEOF(err))
	}
	return decodeSchema(string(meta))
}

// readRunFileSchema reads only a run's schema.
func readRunFileSchema(path string) (domain.Schema, error) {
	f, err := os.Open(path)
	if err != nil {
		return domain.Schema{}, err
	}
	defer f.Close()
	return readRunSchema(bufio.NewReaderSize(f, 4<<10))
}

// fillRun decodes the run's next block into r.rows, leaving it empty
// after the last.
func (r *Reader) fillRun() error {
	if r.run.done {
		return nil
	}
	blk, err := r.run.readBlock()
	if errors.Is(err, io.EOF) {
		r.eof = true
		return nil
	}
	if err != nil {
		return err
	}
	r.rows, err = r.run.decodeBlock(blk, r.dimPos, r.outDims, r.absent, r.rows, r.ring)
	r.read = r.run.rows
	return err
}
