window.rulesdslPreviews("burning_wheel/builder.html", {});
