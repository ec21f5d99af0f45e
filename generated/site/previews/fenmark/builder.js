window.rulesdslPreviews("fenmark/builder.html", {});
