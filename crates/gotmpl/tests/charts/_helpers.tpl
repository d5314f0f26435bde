{{/* Shared helpers of every differential case. */}}
{{- define "c.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- define "c.fullname" -}}
{{- printf "%s-%s" .Release.Name (include "c.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- define "c.labels" -}}
app: {{ include "c.name" . }}
release: {{ .Release.Name }}
{{- end }}
{{- define "c.list" -}}
- a
- b
{{- end }}
{{- define "c.countdown" -}}
{{- if gt (int .) 0 }}{{ . }},{{ include "c.countdown" (sub (int .) 1) }}{{ end }}
{{- end }}
{{- define "c.dot" -}}{{ . }}{{- end }}
{{- define "c.empty" -}}{{- end }}
{{- define "c.loop" -}}{{ include "c.loop" . }}{{- end }}
{{- define "c.yaml" -}}
a: 1
b: [x, y]
{{- end }}
