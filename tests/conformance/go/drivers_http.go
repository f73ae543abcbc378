package main

// net/http as a raw client: each API's request as a hand-rolled client sends it, with an
// http.Client of the suite's timeout. A 4xx or 5xx returns normally: the driver reads
// the body and describes the response with errorclass.DescribeResponse; a 2xx body with
// errorclass.DescribeResponseJSON (a finish reason, a refusal); a transport failure (or a
// body that cannot be read to its end) is the error.
import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	errorclass "github.com/errorclass/classifier/clients/go"
	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
)

func rawRequest(ctx context.Context, s scenario, base string) (*http.Request, error) {
	messages := []map[string]string{{"role": "user", "content": prompt}}
	var url string
	body := map[string]any{}
	headers := map[string]string{"content-type": "application/json"}
	switch s.API {
	case "openai":
		url, body["model"], body["messages"] = base+"/v1/chat/completions", openaiModel, messages
		headers["authorization"] = "Bearer " + openaiKey
	case "azure":
		url = fmt.Sprintf("%s/openai/deployments/%s/chat/completions?api-version=%s", base, azureDeployment, azureAPIVersion)
		body["messages"], headers["api-key"] = messages, azureKey
	case "anthropic":
		url, body["model"], body["max_tokens"], body["messages"] = base+"/v1/messages", anthropicModel, 64, messages
		headers["x-api-key"], headers["anthropic-version"] = anthropicKey, anthropicVersion
	case "gemini":
		method := "generateContent"
		if s.Stream {
			method = "streamGenerateContent?alt=sse"
		}
		url = fmt.Sprintf("%s/v1beta/models/%s:%s", base, s.option("model", geminiModel), method)
		body["contents"] = []map[string]any{{"role": "user", "parts": []map[string]string{{"text": prompt}}}}
		headers["x-goog-api-key"] = geminiKey
	default:
		return nil, fmt.Errorf("no raw request for api %s", s.API)
	}
	if s.Stream && s.API != "gemini" {
		body["stream"] = true
	}
	data, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return req, nil
}

func init() {
	register("go.http", []string{"openai", "azure", "anthropic", "gemini"}, func(ctx context.Context, s scenario, base string) result {
		req, err := rawRequest(ctx, s, base)
		if err != nil {
			return result{err: err}
		}
		resp, err := (&http.Client{Timeout: timeout}).Do(req)
		if err != nil {
			return result{err: err}
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return result{err: err}
		}
		if d := errorclass.DescribeResponse(resp, body, errorclassv1.Origin_ORIGIN_PROVIDER, s.API); d != nil {
			return result{response: d}
		}
		if !s.Stream {
			var parsed any
			if err := json.Unmarshal(body, &parsed); err != nil {
				return result{err: err}
			}
			return result{response: errorclass.DescribeResponseJSON(body, s.API)}
		}
		return result{}
	})
}
