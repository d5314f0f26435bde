{{- define "apps.name" -}}{{ .Chart.Name }}{{- end }}
