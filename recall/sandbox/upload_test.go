package sandbox

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// upload posts a transcription request with file as its audio.
func upload(t *testing.T, url string, file []byte) int {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	w.WriteField("model", "whisper-1")
	fw, _ := w.CreateFormFile("file", "a.mp3")
	fw.Write(file)
	w.Close()
	resp, err := http.Post(url+"/v1/audio/transcriptions", w.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestEmptyUploadsAreCountedAndLatencyIsKept: an empty file is refused,
// charged nothing and counted; an answer comes after the latency asked for.
func TestEmptyUploadsAreCountedAndLatencyIsKept(t *testing.T) {
	s := New(Options{Latency: 150 * time.Millisecond})
	srv := httptest.NewServer(s)
	defer srv.Close()
	if code := upload(t, srv.URL, nil); code != http.StatusBadRequest || s.EmptyUploads() != 1 || len(s.Charges()) != 0 {
		t.Fatalf("an empty upload: %d, %d counted, %d charges", code, s.EmptyUploads(), len(s.Charges()))
	}
	start := time.Now()
	if code := upload(t, srv.URL, bytes.Repeat([]byte{0xff}, 4000)); code != http.StatusOK {
		t.Fatalf("an upload: %d", code)
	}
	if took := time.Since(start); took < 150*time.Millisecond {
		t.Fatalf("answered after %s, before the latency of 150 ms", took)
	}
	if s.EmptyUploads() != 1 || len(s.Charges()) != 1 {
		t.Fatalf("%d empty uploads, %d charges", s.EmptyUploads(), len(s.Charges()))
	}
}
