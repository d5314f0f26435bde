{{- define "web.fullname" -}}
{{ .Release.Name }}-{{ .Chart.Name }}
{{- end -}}
