package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// The environment variables S3ConfigFromEnv reads:
//
//	HANDOFF_S3_ENDPOINT    the S3 API's URL: http://host:port for plain HTTP
//	                       (e.g. MinIO at http://minio:9000), https://host[:port]
//	                       for TLS; empty means AWS S3 (https://s3.amazonaws.com)
//	AWS_REGION             the bucket's region; empty asks the server
//	AWS_ACCESS_KEY_ID      static credentials, with AWS_SECRET_ACCESS_KEY and
//	AWS_SECRET_ACCESS_KEY  (optionally) AWS_SESSION_TOKEN; without them the
//	AWS_SESSION_TOKEN      shared credentials file (~/.aws/credentials,
//	                       AWS_PROFILE) and then the instance, container or
//	                       EKS role are used
const (
	EnvS3Endpoint        = "HANDOFF_S3_ENDPOINT"
	EnvAWSRegion         = "AWS_REGION"
	EnvAWSAccessKeyID    = "AWS_ACCESS_KEY_ID"
	EnvAWSSecretKey      = "AWS_SECRET_ACCESS_KEY"
	EnvAWSSessionToken   = "AWS_SESSION_TOKEN"
	defaultS3Endpoint    = "s3.amazonaws.com"
	defaultS3PartSize    = 16 << 20
	minS3PartSize        = 5 << 20 // S3's minimum for every part but the last
	maxS3PartSize        = 5 << 30
	maxS3Parts           = 10_000
	s3EndpointWantFormat = "want http://host:port or https://host[:port]"
)

// S3EnvNames are the environment variables S3ConfigFromEnv reads.
var S3EnvNames = []string{EnvS3Endpoint, EnvAWSRegion, EnvAWSAccessKeyID, EnvAWSSecretKey, EnvAWSSessionToken}

// S3Config is how to reach an S3-compatible object store.
type S3Config struct {
	// Endpoint is the API's URL, http:// or https://; empty: AWS S3.
	Endpoint string
	// Region of the bucket; empty: asked of the server on first use.
	Region string
	// AccessKeyID and SecretAccessKey (and SessionToken, for temporary
	// credentials) are static credentials. When both are empty, the shared
	// AWS credentials file and then the IAM role of the instance, container
	// or EKS pod are used.
	AccessKeyID, SecretAccessKey, SessionToken string
	// PartSize is the size of each part of a multipart upload, in bytes,
	// and the most a Put buffers in memory; objects up to it are written
	// with one PUT. 0 means 16 MiB; at least 5 MiB.
	PartSize int
	// Transport carries the requests; nil: minio-go's default transport.
	Transport http.RoundTripper
}

// S3ConfigFromEnv reads the variables listed in S3EnvNames through getenv
// (os.Getenv, or a map's lookup in tests).
func S3ConfigFromEnv(getenv func(string) string) S3Config {
	return S3Config{
		Endpoint:        getenv(EnvS3Endpoint),
		Region:          getenv(EnvAWSRegion),
		AccessKeyID:     getenv(EnvAWSAccessKeyID),
		SecretAccessKey: getenv(EnvAWSSecretKey),
		SessionToken:    getenv(EnvAWSSessionToken),
	}
}

// LogValue shows the configuration without its secrets.
func (c S3Config) LogValue() slog.Value {
	creds := "default chain (shared file, IAM role)"
	if c.AccessKeyID != "" {
		creds = "static, key id " + c.AccessKeyID
	}
	endpoint := c.Endpoint
	if endpoint == "" {
		endpoint = "https://" + defaultS3Endpoint
	}
	return slog.GroupValue(
		slog.String("endpoint", endpoint),
		slog.String("region", c.Region),
		slog.String("credentials", creds),
		slog.Int("partSize", c.partSize()),
	)
}

// String shows what LogValue shows, so that printing the configuration
// with fmt (%v, %+v) leaks no secret either.
func (c S3Config) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, a := range c.LogValue().Group() {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%v", a.Key, a.Value)
	}
	b.WriteByte('}')
	return b.String()
}

func (c S3Config) partSize() int {
	if c.PartSize == 0 {
		return defaultS3PartSize
	}
	return c.PartSize
}

// endpoint splits Endpoint into minio-go's host[:port] and TLS switch.
func (c S3Config) endpoint() (host string, secure bool, err error) {
	if c.Endpoint == "" {
		return defaultS3Endpoint, true, nil
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		(u.Path != "" && u.Path != "/") || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", false, fmt.Errorf("S3 endpoint %q: %s", c.Endpoint, s3EndpointWantFormat)
	}
	return u.Host, u.Scheme == "https", nil
}

func (c S3Config) credentials() (*credentials.Credentials, error) {
	switch {
	case c.AccessKeyID != "" && c.SecretAccessKey != "":
		return credentials.NewStaticV4(c.AccessKeyID, c.SecretAccessKey, c.SessionToken), nil
	case c.AccessKeyID != "" || c.SecretAccessKey != "" || c.SessionToken != "":
		return nil, errors.New("S3 credentials: set both the access key id and the secret access key, or neither")
	}
	return credentials.NewChainCredentials([]credentials.Provider{
		&credentials.FileAWSCredentials{},
		&credentials.IAM{},
	}), nil
}

// client checks the configuration and builds the minio-go client; it
// makes no request.
func (c S3Config) client() (*minio.Core, error) {
	if ps := c.PartSize; ps != 0 && (ps < minS3PartSize || ps > maxS3PartSize) {
		return nil, fmt.Errorf("S3 part size %d: want 5 MiB to 5 GiB", ps)
	}
	host, secure, err := c.endpoint()
	if err != nil {
		return nil, err
	}
	creds, err := c.credentials()
	if err != nil {
		return nil, err
	}
	core, err := minio.NewCore(host, &minio.Options{
		Creds: creds, Secure: secure, Region: c.Region, Transport: c.Transport,
	})
	if err != nil {
		return nil, fmt.Errorf("S3 client for %s: %w", host, err)
	}
	return core, nil
}
