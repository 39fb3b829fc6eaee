package storage

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/minio/minio-go/v7"
)

// abortTimeout bounds aborting a failed multipart upload, which runs even
// when the Put's context is already cancelled.
const abortTimeout = 30 * time.Second

// upload is the writer an S3 Put hands to its write function. It buffers
// up to one part. An object that fits in one part goes up in a single PUT
// when write returns; a larger one becomes a multipart upload whose parts
// are sent as the buffer fills and which is completed only when write
// returned nil. S3 makes an object visible only when its PUT or its
// CompleteMultipartUpload succeeds, so a failure at any earlier point
// leaves nothing behind but an aborted upload.
//
// Every request carries the payload's SHA-256 (signed) and MD5, so the
// server refuses a body damaged on the way, over plain HTTP too.
type upload struct {
	ctx    context.Context
	s      *S3
	object string
	buf    []byte
	id     string // multipart upload id, once started; "" after completion
	parts  []minio.CompletePart
	err    error // the first failed Write: nothing is completed after it
}

// Write buffers p, sending a part whenever the buffer is full and more
// bytes follow.
func (u *upload) Write(p []byte) (int, error) {
	if u.err != nil {
		return 0, u.err
	}
	if err := u.ctx.Err(); err != nil {
		u.err = err
		return 0, err
	}
	written := 0
	for len(p) > 0 {
		if len(u.buf) == u.s.partSize {
			if err := u.sendPart(); err != nil {
				u.err = err
				return written, err
			}
		}
		n := min(len(p), u.s.partSize-len(u.buf))
		u.buf = append(u.buf, p[:n]...)
		p, written = p[n:], written+n
	}
	return written, nil
}

// sendPart uploads the buffer as the next part, starting the multipart
// upload first if needed.
func (u *upload) sendPart() error {
	if len(u.parts) == maxS3Parts {
		return fmt.Errorf("object larger than %d parts of %d bytes", maxS3Parts, u.s.partSize)
	}
	if u.id == "" {
		id, err := u.s.core.NewMultipartUpload(u.ctx, u.s.bucket, u.object, minio.PutObjectOptions{})
		if err != nil {
			return fmt.Errorf("start multipart upload: %w", err)
		}
		u.id = id
	}
	num := len(u.parts) + 1
	md5sum, sha := sums(u.buf)
	part, err := u.s.core.PutObjectPart(u.ctx, u.s.bucket, u.object, u.id, num,
		bytes.NewReader(u.buf), int64(len(u.buf)),
		minio.PutObjectPartOptions{Md5Base64: md5sum, Sha256Hex: sha, DisableContentSha256: true})
	if err != nil {
		return fmt.Errorf("upload part %d: %w", num, err)
	}
	u.parts = append(u.parts, minio.CompletePart{PartNumber: num, ETag: part.ETag})
	u.buf = u.buf[:0]
	return nil
}

// finish makes the object visible: one PUT, or the last part and the
// completion of the multipart upload.
func (u *upload) finish() error {
	if u.err != nil { // write ignored a failed Write: the stream is not whole
		return u.err
	}
	if err := u.ctx.Err(); err != nil {
		return err
	}
	if u.id == "" {
		md5sum, sha := sums(u.buf)
		_, err := u.s.core.PutObject(u.ctx, u.s.bucket, u.object, bytes.NewReader(u.buf), int64(len(u.buf)),
			md5sum, sha, minio.PutObjectOptions{DisableContentSha256: true})
		if err != nil {
			return fmt.Errorf("put object: %w", err)
		}
		return nil
	}
	if len(u.buf) > 0 {
		if err := u.sendPart(); err != nil {
			return err
		}
	}
	if _, err := u.s.core.CompleteMultipartUpload(u.ctx, u.s.bucket, u.object, u.id, u.parts, minio.PutObjectOptions{}); err != nil {
		return fmt.Errorf("complete multipart upload: %w", err)
	}
	u.id = ""
	return nil
}

// abort discards a multipart upload that was started and not completed,
// with a context of its own: the Put's may be what was cancelled.
func (u *upload) abort() error {
	if u.id == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(u.ctx), abortTimeout)
	defer cancel()
	err := u.s.core.AbortMultipartUpload(ctx, u.s.bucket, u.object, u.id)
	u.id = ""
	if err != nil && minio.ToErrorResponse(err).Code != minio.NoSuchUpload {
		return fmt.Errorf("abort multipart upload: %w", err)
	}
	return nil
}

// sums are the base64 MD5 and hex SHA-256 of b, as S3 headers want them.
func sums(b []byte) (md5sum, sha string) {
	m := md5.Sum(b)
	s := sha256.Sum256(b)
	return base64.StdEncoding.EncodeToString(m[:]), hex.EncodeToString(s[:])
}
