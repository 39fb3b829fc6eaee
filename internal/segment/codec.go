package segment

import (
	"sync"

	"github.com/klauspost/compress/zstd"
	pzstd "github.com/parquet-go/parquet-go/compress/zstd"
)

// zstdWindow is the compression window. Each page is compressed on its
// own and holds at most about a page buffer (256 KiB by default), so a
// larger window finds no more matches; the default 8 MiB window costs each
// pooled encoder 16 MiB of history instead of 1 MiB.
const zstdWindow = 256 << 10

// codec compresses pages with zstd at its default level (about zstd -3).
// It is shared so its pool of encoders is reused across files.
var codec = &zstdCodec{}

// zstdCodec is parquet-go's zstd codec with a page-sized window. The
// embedded codec decodes and names the format.
type zstdCodec struct {
	pzstd.Codec
	encoders sync.Pool // *zstd.Encoder
}

func (c *zstdCodec) Encode(dst, src []byte) ([]byte, error) {
	e, _ := c.encoders.Get().(*zstd.Encoder)
	if e == nil {
		var err error
		e, err = zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstd.SpeedDefault),
			zstd.WithEncoderConcurrency(1),
			zstd.WithWindowSize(zstdWindow),
			zstd.WithZeroFrames(true),
			zstd.WithEncoderCRC(false), // Parquet pages carry no zstd checksum
		)
		if err != nil {
			return nil, err
		}
	}
	defer c.encoders.Put(e)
	return e.EncodeAll(src, dst[:0]), nil
}
